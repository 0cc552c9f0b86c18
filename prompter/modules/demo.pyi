# prompter.modules.demo at run time (scripts/facade_stubs.py)
from modules.demo import *  # noqa: F403
