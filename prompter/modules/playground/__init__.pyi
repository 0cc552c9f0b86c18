# prompter.modules.playground at run time (scripts/facade_stubs.py)
from modules.playground import *  # noqa: F403
