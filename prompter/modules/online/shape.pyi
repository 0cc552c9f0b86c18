# prompter.modules.online.shape at run time (scripts/facade_stubs.py)
from modules.online.shape import *  # noqa: F403
