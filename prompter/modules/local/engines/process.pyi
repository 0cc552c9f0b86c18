# prompter.modules.local.engines.process at run time (scripts/facade_stubs.py)
from modules.local.engines.process import *  # noqa: F403
