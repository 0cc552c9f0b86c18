# prompter.modules.eval.candidates at run time (scripts/facade_stubs.py)
from modules.eval.candidates import *  # noqa: F403
