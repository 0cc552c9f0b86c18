# prompter.modules.local.engines.admission at run time (scripts/facade_stubs.py)
from modules.local.engines.admission import *  # noqa: F403
