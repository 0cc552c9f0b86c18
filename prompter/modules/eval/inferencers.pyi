# prompter.modules.eval.inferencers at run time (scripts/facade_stubs.py)
from modules.eval.inferencers import *  # noqa: F403
