# prompter.modules.local.training.history at run time (scripts/facade_stubs.py)
from modules.local.training.history import *  # noqa: F403
