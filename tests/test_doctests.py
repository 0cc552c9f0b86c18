"""Docstrings teach with examples, and every example runs: the doctests of both packages."""

from __future__ import annotations

import doctest
import importlib
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# deprecated aliases warn on import; they hold no examples of their own
SKIP = {"prompter.model_format", "modules.sources", "modules.retry", "modules.trainable", "modules.tiny_model"}


def _modules() -> list[str]:
    names = []
    for package in ("prompter", "modules"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join(parts)
            if name not in SKIP and ">>>" in path.read_text(encoding="utf-8"):
                names.append(name)
    return names


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_run(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
