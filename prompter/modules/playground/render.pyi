# prompter.modules.playground.render at run time (scripts/facade_stubs.py)
from modules.playground.render import *  # noqa: F403
