# prompter.modules.online.sse at run time (scripts/facade_stubs.py)
from modules.online.sse import *  # noqa: F403
