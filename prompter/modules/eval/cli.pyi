# prompter.modules.eval.cli at run time (scripts/facade_stubs.py)
from modules.eval.cli import *  # noqa: F403
