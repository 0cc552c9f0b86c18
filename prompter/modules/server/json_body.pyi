# prompter.modules.server.json_body at run time (scripts/facade_stubs.py)
from modules.server.json_body import *  # noqa: F403
