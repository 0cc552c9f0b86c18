# prompter.modules.local.scoring at run time (scripts/facade_stubs.py)
from modules.local.scoring import *  # noqa: F403
