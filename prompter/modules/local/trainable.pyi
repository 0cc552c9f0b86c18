# prompter.modules.local.trainable at run time (scripts/facade_stubs.py)
from modules.local.trainable import *  # noqa: F403
