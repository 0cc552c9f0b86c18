# prompter.modules.local.stream_async at run time (scripts/facade_stubs.py)
from modules.local.stream_async import *  # noqa: F403
