# prompter.modules.local.training.batches at run time (scripts/facade_stubs.py)
from modules.local.training.batches import *  # noqa: F403
