"""Behaviour: ``TrainableModule.prepare_text`` (the raw-text entry point) refuses a prompt that is not text
with a typed error, never a bare ``TypeError`` or ``AttributeError`` from deep in the tokenizer.

Before: ``prepare_text(5)`` raised ``TypeError: object of type 'int' has no len()``,
``prepare_text(["a"])`` ``AttributeError: 'list' object has no attribute 'isascii'``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.errors import ModuleError
from modules.local.trainable import TrainableModule


@pytest.mark.parametrize("prompt", [5, None, b"hi", ["a"], {"a": 1}, 1.5])
def test_a_prompt_that_is_not_text_is_a_typed_error(tiny_model_path: Path, prompt: Any) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_new_tokens=4)
    with pytest.raises(ModuleError, match="prompt: expected text"):
        module.prepare_text(prompt)


def test_text_is_still_taken(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_new_tokens=4)
    assert module.prepare_text("Once upon a time").input_ids
