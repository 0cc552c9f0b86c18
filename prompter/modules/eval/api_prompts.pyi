# prompter.modules.eval.api_prompts at run time (scripts/facade_stubs.py)
from modules.eval.api_prompts import *  # noqa: F403
