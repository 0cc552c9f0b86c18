# prompter.modules.online.ollama_generate at run time (scripts/facade_stubs.py)
from modules.online.ollama_generate import *  # noqa: F403
