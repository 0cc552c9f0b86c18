"""A TrainableModule whose constructor refused its arguments still has a repr.

A traceback that shows locals (``TracebackException(capture_locals=True)``, error
trackers, ``pytest --showlocals``) reprs ``self`` in ``__init__``'s frame. The repr
read ``self._backend``, which the refused constructor never set, so formatting the
traceback of ``TrainableModule(123)`` failed with AttributeError instead of showing
the ModuleConfigError.
"""

from __future__ import annotations

import traceback

import pytest

from modules.errors import ModuleConfigError
from modules.local.trainable import TrainableModule


def test_a_refused_constructor_error_formats_with_locals() -> None:
    with pytest.raises(ModuleConfigError) as info:
        TrainableModule(123)  # type: ignore[arg-type]
    shown = "".join(traceback.TracebackException.from_exception(info.value, capture_locals=True).format())
    assert "TrainableModule(<not built>)" in shown and "ModuleConfigError: path:" in shown


def test_a_half_built_module_has_a_repr() -> None:
    assert repr(object.__new__(TrainableModule)) == "TrainableModule(<not built>)"
