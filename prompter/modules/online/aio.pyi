# prompter.modules.online.aio at run time (scripts/facade_stubs.py)
from modules.online.aio import *  # noqa: F403
