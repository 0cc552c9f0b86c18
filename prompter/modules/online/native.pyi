# prompter.modules.online.native at run time (scripts/facade_stubs.py)
from modules.online.native import *  # noqa: F403
