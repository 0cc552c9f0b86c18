# prompter.modules.local.engines.prefix_cache at run time (scripts/facade_stubs.py)
from modules.local.engines.prefix_cache import *  # noqa: F403
