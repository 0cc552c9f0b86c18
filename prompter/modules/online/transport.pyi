# prompter.modules.online.transport at run time (scripts/facade_stubs.py)
from modules.online.transport import *  # noqa: F403
