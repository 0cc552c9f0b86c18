"""Deprecated location; use ``modules.local.trainable``. Kept one release: earlier docs imported it here."""

import warnings

from modules.local.trainable import *  # noqa: F403
from modules.local.trainable import __all__ as __all__

warnings.warn(
    "modules.trainable is deprecated; import from modules.local.trainable",
    DeprecationWarning,
    stacklevel=2,
)
