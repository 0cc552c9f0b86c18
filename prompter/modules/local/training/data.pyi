# prompter.modules.local.training.data at run time (scripts/facade_stubs.py)
from modules.local.training.data import *  # noqa: F403
