# prompter.modules.server.tool_calls at run time (scripts/facade_stubs.py)
from modules.server.tool_calls import *  # noqa: F403
