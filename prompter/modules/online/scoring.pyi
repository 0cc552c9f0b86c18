# prompter.modules.online.scoring at run time (scripts/facade_stubs.py)
from modules.online.scoring import *  # noqa: F403
