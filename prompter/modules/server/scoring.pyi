# prompter.modules.server.scoring at run time (scripts/facade_stubs.py)
from modules.server.scoring import *  # noqa: F403
