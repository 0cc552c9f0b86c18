"""Deprecated location; use ``modules.online.sources``. Kept one release: earlier docs imported it here."""

import warnings

from modules.online.sources import *  # noqa: F403
from modules.online.sources import __all__ as __all__

warnings.warn(
    "modules.sources is deprecated; import from modules.online.sources",
    DeprecationWarning,
    stacklevel=2,
)
