# prompter.modules.online.retry at run time (scripts/facade_stubs.py)
from modules.online.retry import *  # noqa: F403
