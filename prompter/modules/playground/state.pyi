# prompter.modules.playground.state at run time (scripts/facade_stubs.py)
from modules.playground.state import *  # noqa: F403
