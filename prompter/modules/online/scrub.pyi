# prompter.modules.online.scrub at run time (scripts/facade_stubs.py)
from modules.online.scrub import *  # noqa: F403
