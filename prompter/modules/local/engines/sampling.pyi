# prompter.modules.local.engines.sampling at run time (scripts/facade_stubs.py)
from modules.local.engines.sampling import *  # noqa: F403
