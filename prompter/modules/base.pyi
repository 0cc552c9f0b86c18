# prompter.modules.base at run time (scripts/facade_stubs.py)
from modules.base import *  # noqa: F403
