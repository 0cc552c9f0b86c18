"""A temperature outside OpenAI's 0..2 is a typed error on every way into a local generation.

A call (``m(...)``) and the server refused ``temperature=5`` or ``inf``, but ``prepare`` and
``prepare_text`` (the server's entry points, and the evaluation's) took any number up to
infinity and sampled from a flattened distribution. Now all paths share the one range.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.errors import ModuleConfigError
from modules.local.trainable import TrainableModule

USER = [{"role": "user", "content": "hi"}]


def paths(m: TrainableModule) -> dict[str, Any]:
    return {
        "prepare_text": lambda **kw: m.prepare_text("hi", **kw),
        "prepare": lambda **kw: m.prepare(USER, **kw),
        "build_request": lambda **kw: m.build_request("hi", **kw),
    }


@pytest.mark.parametrize("temperature", [2.5, 7, 1e308, float("inf")], ids=["2.5", "7", "1e308", "inf"])
@pytest.mark.parametrize("path", ["prepare_text", "prepare", "build_request"])
def test_a_temperature_above_two_is_a_typed_error(tiny_model_path: Path, path: str, temperature: float) -> None:  # noqa: F811
    m = TrainableModule(tiny_model_path)
    with pytest.raises(ModuleConfigError, match="temperature"):
        paths(m)[path](temperature=temperature)


@pytest.mark.parametrize("path", ["prepare_text", "prepare", "build_request"])
def test_two_itself_is_taken(tiny_model_path: Path, path: str) -> None:  # noqa: F811
    assert paths(TrainableModule(tiny_model_path))[path](temperature=2).options.temperature == 2.0
