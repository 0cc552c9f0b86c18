# prompter.modules.server.sse at run time (scripts/facade_stubs.py)
from modules.server.sse import *  # noqa: F403
