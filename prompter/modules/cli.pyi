# prompter.modules.cli at run time (scripts/facade_stubs.py)
from modules.cli import *  # noqa: F403
