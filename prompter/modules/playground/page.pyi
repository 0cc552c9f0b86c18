# prompter.modules.playground.page at run time (scripts/facade_stubs.py)
from modules.playground.page import *  # noqa: F403
