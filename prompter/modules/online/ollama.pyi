# prompter.modules.online.ollama at run time (scripts/facade_stubs.py)
from modules.online.ollama import *  # noqa: F403
