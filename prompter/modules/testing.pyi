# prompter.modules.testing at run time (scripts/facade_stubs.py)
from modules.testing import *  # noqa: F403
