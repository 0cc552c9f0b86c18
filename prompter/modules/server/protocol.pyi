# prompter.modules.server.protocol at run time (scripts/facade_stubs.py)
from modules.server.protocol import *  # noqa: F403
