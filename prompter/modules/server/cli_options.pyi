# prompter.modules.server.cli_options at run time (scripts/facade_stubs.py)
from modules.server.cli_options import *  # noqa: F403
