# prompter.modules.eval.runner at run time (scripts/facade_stubs.py)
from modules.eval.runner import *  # noqa: F403
