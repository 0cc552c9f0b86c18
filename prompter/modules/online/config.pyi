# prompter.modules.online.config at run time (scripts/facade_stubs.py)
from modules.online.config import *  # noqa: F403
