# prompter.modules.local.training.example at run time (scripts/facade_stubs.py)
from modules.local.training.example import *  # noqa: F403
