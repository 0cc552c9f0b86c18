# prompter.modules.chat_repl at run time (scripts/facade_stubs.py)
from modules.chat_repl import *  # noqa: F403
