# The names a type checker sees for the facade in prompter/modules.py, which loads them at run time.
# Written by scripts/facade_stubs.py, as is every stub in this folder.
from modules import *  # noqa: F403
from modules import __all__ as __all__
from modules import __version__ as __version__
from modules import testing as testing
