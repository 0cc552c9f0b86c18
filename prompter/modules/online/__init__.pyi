# prompter.modules.online at run time (scripts/facade_stubs.py)
from modules.online import *  # noqa: F403
