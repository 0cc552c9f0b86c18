# prompter.modules.sources at run time (scripts/facade_stubs.py)
from modules.online.sources import *  # noqa: F403
