"""A tools list changed in place is noticed even when ``==`` cannot see the change.

The fast paths remember a tools list by identity and confirm it is unchanged before reusing
the text rendered from it. ``1 == True == 1.0``, ``0.0 == -0.0`` and dicts equal in another
key order all print differently (``1``, ``true``, ``1.0``; key order is JSON text order), so
the confirmation must be exact, or the prompt shows the tools as they were, not as they are.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from prompter.formats.fixed import render_full
from prompter.formats.model_format import ModelFormat


def _tools() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather in a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "default": 1}},
                    "required": ["city"],
                },
            },
        }
    ]


def _params(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return tools[0]["function"]["parameters"]


CHANGES: dict[str, Callable[[list[dict[str, Any]]], None]] = {
    "int to bool": lambda t: _params(t)["properties"]["days"].__setitem__("default", True),
    "int to float": lambda t: _params(t)["properties"]["days"].__setitem__("default", 1.0),
    "keys reordered": lambda t: _params(t).__setitem__("properties", dict(reversed(_params(t)["properties"].items()))),
    "zero to minus zero": lambda t: _params(t)["properties"]["days"].__setitem__("default", -0.0),
}


@pytest.mark.parametrize("family", ["qwen2.5", "llama-3.1", "hermes-2-pro", "mistral-nemo"])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_tools_changed_in_place_to_an_equal_value_render_as_they_are_now(family: str, change: str) -> None:
    fmt = ModelFormat.get(family)
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    tools = _tools()
    if change == "zero to minus zero":
        _params(tools)["properties"]["days"]["default"] = 0.0
    for _ in range(3):  # seen often enough for every cache to hold it
        fmt.render(messages, tools=tools)
    before = copy.deepcopy(tools)
    CHANGES[change](tools)
    assert tools == before  # the change is invisible to ==
    expected = render_full(fmt, messages, copy.deepcopy(tools), True, {}, False, use_layout=False).text
    assert fmt.render(messages, tools=tools) == expected
