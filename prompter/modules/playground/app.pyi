# prompter.modules.playground.app at run time (scripts/facade_stubs.py)
from modules.playground.app import *  # noqa: F403
