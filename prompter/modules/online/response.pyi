# prompter.modules.online.response at run time (scripts/facade_stubs.py)
from modules.online.response import *  # noqa: F403
