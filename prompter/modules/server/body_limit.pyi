# prompter.modules.server.body_limit at run time (scripts/facade_stubs.py)
from modules.server.body_limit import *  # noqa: F403
