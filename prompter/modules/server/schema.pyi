# prompter.modules.server.schema at run time (scripts/facade_stubs.py)
from modules.server.schema import *  # noqa: F403
