# prompter.modules.online.module at run time (scripts/facade_stubs.py)
from modules.online.module import *  # noqa: F403
