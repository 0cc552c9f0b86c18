# prompter.modules.local.safe_tokens at run time (scripts/facade_stubs.py)
from modules.local.safe_tokens import *  # noqa: F403
