# prompter.modules.local.training.loop at run time (scripts/facade_stubs.py)
from modules.local.training.loop import *  # noqa: F403
