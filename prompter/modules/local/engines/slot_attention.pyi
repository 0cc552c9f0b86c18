# prompter.modules.local.engines.slot_attention at run time (scripts/facade_stubs.py)
from modules.local.engines.slot_attention import *  # noqa: F403
