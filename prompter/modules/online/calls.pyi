# prompter.modules.online.calls at run time (scripts/facade_stubs.py)
from modules.online.calls import *  # noqa: F403
