# prompter.modules.server.app at run time (scripts/facade_stubs.py)
from modules.server.app import *  # noqa: F403
