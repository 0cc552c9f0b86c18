# prompter.modules.online.gemini at run time (scripts/facade_stubs.py)
from modules.online.gemini import *  # noqa: F403
