# prompter.modules.eval.datasets at run time (scripts/facade_stubs.py)
from modules.eval.datasets import *  # noqa: F403
