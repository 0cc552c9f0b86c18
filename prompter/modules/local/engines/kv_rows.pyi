# prompter.modules.local.engines.kv_rows at run time (scripts/facade_stubs.py)
from modules.local.engines.kv_rows import *  # noqa: F403
