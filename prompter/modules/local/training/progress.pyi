# prompter.modules.local.training.progress at run time (scripts/facade_stubs.py)
from modules.local.training.progress import *  # noqa: F403
