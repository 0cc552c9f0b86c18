# prompter.modules.local.streaming at run time (scripts/facade_stubs.py)
from modules.local.streaming import *  # noqa: F403
