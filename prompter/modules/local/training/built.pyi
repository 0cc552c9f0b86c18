# prompter.modules.local.training.built at run time (scripts/facade_stubs.py)
from modules.local.training.built import *  # noqa: F403
