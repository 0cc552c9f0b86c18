# prompter.modules.eval.ray_backend at run time (scripts/facade_stubs.py)
from modules.eval.ray_backend import *  # noqa: F403
