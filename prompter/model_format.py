"""Deprecated location of :class:`ModelFormat`; use ``from prompter import ModelFormat``.

Kept for one release because earlier documentation imported it from here.
"""

import warnings

from prompter.formats.model_format import GENERIC, ModelFormat

warnings.warn(
    "prompter.model_format is deprecated; import ModelFormat from prompter (or prompter.formats.model_format)",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["GENERIC", "ModelFormat"]
