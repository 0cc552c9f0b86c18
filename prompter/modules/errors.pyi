# prompter.modules.errors at run time (scripts/facade_stubs.py)
from modules.errors import *  # noqa: F403
