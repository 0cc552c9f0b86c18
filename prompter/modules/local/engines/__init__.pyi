# prompter.modules.local.engines at run time (scripts/facade_stubs.py)
from modules.local.engines import *  # noqa: F403
