"""Deprecated location; use ``modules.online.retry``. Kept one release: earlier docs imported it here."""

import warnings

from modules.online.retry import *  # noqa: F403
from modules.online.retry import __all__ as __all__

warnings.warn(
    "modules.retry is deprecated; import from modules.online.retry",
    DeprecationWarning,
    stacklevel=2,
)
