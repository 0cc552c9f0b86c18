"""docs/playground.md: "JSON nested deeper than 32 levels is a 400". A field nested exactly 32 levels (objects and
arrays; a string at the bottom is no level) renders; 33 levels are refused, in every JSON field. Before, the string
at the bottom counted as a level, so 32 levels of nesting were refused as deeper than 32."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from modules.playground.state import MAX_DEPTH
from prompter import ChatPrompter


def _levels(value: Any) -> int:
    """Objects and arrays nested in ``value``, counted independently of the playground's code."""
    if isinstance(value, dict):
        return 1 + max((_levels(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_levels(v) for v in value), default=0)
    return 0


def _tools(levels: int) -> list[dict[str, Any]]:
    """One tool whose JSON nests exactly ``levels`` deep: a list, the tool, its function, then a schema."""
    schema_levels = levels - 3
    leaf: dict[str, Any] = {"type": "string"} if schema_levels % 2 else {"type": "string", "enum": ["x"]}
    schema = leaf
    for _ in range((schema_levels - _levels(leaf)) // 2):
        schema = {"type": "object", "properties": {"a": schema}}
    tools = [{"type": "function", "function": {"name": "f", "description": "d", "parameters": schema}}]
    assert _levels(tools) == levels
    return tools


def _post(base: str, state: dict[str, str]) -> requests.Response:
    return requests.post(base + "api/render", json={"state": state}, timeout=30)


@pytest.mark.parametrize("model_format", [None, "qwen2.5"], ids=["generic", "qwen2.5"])
def test_tools_nested_exactly_to_the_limit_render_as_generate_prompt_does(
    playground_url: str, model_format: str | None
) -> None:
    tools = _tools(MAX_DEPTH)
    state = {"input": "hi", "tools": json.dumps(tools)}
    if model_format:
        state["model_format"] = model_format
    response = _post(playground_url, state)
    assert response.status_code == 200, response.text[:500]
    assert response.json()["output"] == ChatPrompter().generate_prompt("hi", tools=tools, model_format=model_format)


def test_a_slot_value_nested_exactly_to_the_limit_is_not_refused_for_its_depth(playground_url: str) -> None:
    value: Any = "deep"
    for _ in range(MAX_DEPTH - 1):
        value = [value]
    text = json.dumps({"input": value})  # the object is one more level: MAX_DEPTH in all
    error = _post(playground_url, {"input": text}).json().get("error")
    assert error is None or "deeper than" not in error["message"], error


@pytest.mark.parametrize("field", ["history", "tools", "input"])
def test_one_level_past_the_limit_is_a_400_naming_the_field(playground_url: str, field: str) -> None:
    deep: Any = "x"
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    text = json.dumps({"input": deep[0]}) if field == "input" else json.dumps(deep)
    if field == "tools":
        text = json.dumps(_tools(MAX_DEPTH + 1))
    assert _levels(json.loads(text)) == MAX_DEPTH + 1
    response = _post(playground_url, {"input": "hi", field: text})
    assert response.status_code == 400
    assert response.json()["error"] == {
        "type": "FieldError",
        "field": field,
        "message": f"{field}: nested deeper than {MAX_DEPTH} levels",
    }
