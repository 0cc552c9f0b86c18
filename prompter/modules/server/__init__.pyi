# prompter.modules.server at run time (scripts/facade_stubs.py)
from modules.server import *  # noqa: F403
