"""Deprecated location; use ``modules.local.tiny_model``. Kept one release: earlier docs imported it here."""

import warnings

from modules.local.tiny_model import *  # noqa: F403
from modules.local.tiny_model import __all__ as __all__

warnings.warn(
    "modules.tiny_model is deprecated; import from modules.local.tiny_model",
    DeprecationWarning,
    stacklevel=2,
)
