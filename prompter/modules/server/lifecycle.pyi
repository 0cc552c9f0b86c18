# prompter.modules.server.lifecycle at run time (scripts/facade_stubs.py)
from modules.server.lifecycle import *  # noqa: F403
