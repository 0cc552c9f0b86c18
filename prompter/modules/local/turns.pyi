# prompter.modules.local.turns at run time (scripts/facade_stubs.py)
from modules.local.turns import *  # noqa: F403
