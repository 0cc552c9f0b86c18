# prompter.modules.playground.cli at run time (scripts/facade_stubs.py)
from modules.playground.cli import *  # noqa: F403
