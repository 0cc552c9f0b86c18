# prompter.modules.local.engines.worker at run time (scripts/facade_stubs.py)
from modules.local.engines.worker import *  # noqa: F403
