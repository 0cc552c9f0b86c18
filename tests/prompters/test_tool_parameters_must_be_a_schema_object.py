"""A tool whose ``parameters`` is not a JSON Schema object (or whose ``description`` is not text) is refused
with a ToolsError naming the field: every API answers 400 to it (Anthropic's ``input_schema`` and
Gemini's ``parameters`` must be objects), and a local template would render it as something else."""

from __future__ import annotations

from typing import Any

import pytest

from prompter import ChatPrompter
from prompter.errors import ToolsError


def _tool(**function: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "weather", **function}}


@pytest.mark.parametrize("parameters", ["{'type': 'object'}", ["city"], 3, True], ids=["str", "list", "int", "bool"])
@pytest.mark.parametrize("fmt", ["openai", "anthropic", "gemini", "ollama"])
def test_parameters_that_are_not_an_object_are_refused_by_name(parameters: Any, fmt: str) -> None:
    with pytest.raises(ToolsError, match=r"tools\[0\]\.function\.parameters: expected a JSON Schema object"):
        ChatPrompter("").generate_prompt("hi", tools=[_tool(parameters=parameters)], format=fmt)


def test_a_description_that_is_not_text_is_refused_by_name() -> None:
    with pytest.raises(ToolsError, match=r"tools\[0\]\.function\.description: expected a str"):
        ChatPrompter("").generate_prompt("hi", tools=[_tool(description={"text": "x"})], format="anthropic")


def test_an_object_schema_and_no_schema_still_render() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    body = ChatPrompter("").generate_prompt("hi", tools=[_tool(parameters=schema), _tool()], format="anthropic")
    assert [t["input_schema"] for t in body["tools"]] == [schema, {"type": "object", "properties": {}}]
