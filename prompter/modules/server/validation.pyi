# prompter.modules.server.validation at run time (scripts/facade_stubs.py)
from modules.server.validation import *  # noqa: F403
