# prompter.modules.server.errors at run time (scripts/facade_stubs.py)
from modules.server.errors import *  # noqa: F403
