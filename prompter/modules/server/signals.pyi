# prompter.modules.server.signals at run time (scripts/facade_stubs.py)
from modules.server.signals import *  # noqa: F403
