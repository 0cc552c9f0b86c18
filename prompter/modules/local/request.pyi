# prompter.modules.local.request at run time (scripts/facade_stubs.py)
from modules.local.request import *  # noqa: F403
