# prompter.modules.eval.pipeline at run time (scripts/facade_stubs.py)
from modules.eval.pipeline import *  # noqa: F403
