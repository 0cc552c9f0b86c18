# prompter.modules.local.tool_calls at run time (scripts/facade_stubs.py)
from modules.local.tool_calls import *  # noqa: F403
