# prompter.modules.online.anthropic at run time (scripts/facade_stubs.py)
from modules.online.anthropic import *  # noqa: F403
