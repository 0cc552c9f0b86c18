# prompter.modules.local.vocab at run time (scripts/facade_stubs.py)
from modules.local.vocab import *  # noqa: F403
