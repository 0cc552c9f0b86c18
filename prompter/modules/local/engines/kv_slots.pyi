# prompter.modules.local.engines.kv_slots at run time (scripts/facade_stubs.py)
from modules.local.engines.kv_slots import *  # noqa: F403
