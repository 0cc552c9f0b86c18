# prompter.modules.local.engines.vllm at run time (scripts/facade_stubs.py)
from modules.local.engines.vllm import *  # noqa: F403
