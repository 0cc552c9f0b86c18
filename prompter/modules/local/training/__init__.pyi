# prompter.modules.local.training at run time (scripts/facade_stubs.py)
from modules.local.training import *  # noqa: F403
