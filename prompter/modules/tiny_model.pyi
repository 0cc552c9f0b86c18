# prompter.modules.tiny_model at run time (scripts/facade_stubs.py)
from modules.local.tiny_model import *  # noqa: F403
