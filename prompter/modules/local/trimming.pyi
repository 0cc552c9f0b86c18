# prompter.modules.local.trimming at run time (scripts/facade_stubs.py)
from modules.local.trimming import *  # noqa: F403
