"""Threat: a caller's own object in a request (a str whose comparisons raise) escapes as an untyped error.

``TrainableModule.prepare`` traces user text by collecting every string of the request in a set,
which compared the caller's str subclass with its own ``__eq__``: a raising one came out as a bare
``RuntimeError``. Strings are now read as their exact text; what the template then does with the
object ends in a typed error or a prompt.
"""

from __future__ import annotations

from pathlib import Path

from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.errors import ModuleError
from modules.local.trainable import TrainableModule
from prompter.errors import PromptError


class _RaisingEq(str):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("compared")

    __hash__ = str.__hash__


def test_a_str_whose_comparison_raises_in_a_tool_schema_is_a_typed_error_or_a_prompt(
    tiny_model_path: Path,  # noqa: F811
) -> None:
    module = TrainableModule(tiny_model_path, max_new_tokens=2)
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": {"x": {"type": "string", "default": _RaisingEq("x")}}},
        },
    }
    try:
        request = module.prepare([{"role": "user", "content": "hi"}], [tool])
    except (ModuleError, PromptError):
        return
    assert request.input_ids
