# prompter.modules.online.redirects at run time (scripts/facade_stubs.py)
from modules.online.redirects import *  # noqa: F403
