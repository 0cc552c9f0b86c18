# prompter.modules.server.host_check at run time (scripts/facade_stubs.py)
from modules.server.host_check import *  # noqa: F403
