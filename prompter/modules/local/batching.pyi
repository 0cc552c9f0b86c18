# prompter.modules.local.batching at run time (scripts/facade_stubs.py)
from modules.local.batching import *  # noqa: F403
