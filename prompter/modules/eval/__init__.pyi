# prompter.modules.eval at run time (scripts/facade_stubs.py)
from modules.eval import *  # noqa: F403
