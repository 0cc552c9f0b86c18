# prompter.modules.server.limits at run time (scripts/facade_stubs.py)
from modules.server.limits import *  # noqa: F403
