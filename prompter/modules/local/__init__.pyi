# prompter.modules.local at run time (scripts/facade_stubs.py)
from modules.local import *  # noqa: F403
