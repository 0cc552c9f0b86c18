# prompter.modules.online.dialects at run time (scripts/facade_stubs.py)
from modules.online.dialects import *  # noqa: F403
