"""Tool-call arguments and tools must be JSON: ``NaN``/``Infinity`` (which Python's json reads and writes)
make a body every API refuses, and a key given twice makes the caller's text (sent by the OpenAI dialects)
and the parsed object (sent by Anthropic, Gemini, Ollama and local templates) say different things.
Both are a MessageError / ToolsError naming the problem, in every API dialect. A local model's template
reads them as transformers renders them (its own ``tojson`` writes ``NaN``): no error there."""

from __future__ import annotations

import math
from typing import Any

import pytest

from prompter import ChatPrompter
from prompter.errors import MessageError, ToolsError

DIALECTS = ["openai", "anthropic", "gemini", "ollama", "dashscope", "zhipu"]


def _history(arguments: Any) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]


@pytest.mark.parametrize("fmt", DIALECTS)
@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ('{"x": NaN}', "NaN is not a JSON value"),
        ('{"x": -Infinity}', "-Infinity is not a JSON value"),
        ('{"x": {"y": Infinity}}', "Infinity is not a JSON value"),
        ('{"city": "Paris", "city": "Rome"}', "'city' appears twice"),
        ('{"a": {"b": 1, "b": 2}}', "'b' appears twice"),
    ],
)
def test_arguments_text_that_is_not_json_is_refused(arguments: str, says: str, fmt: str) -> None:
    with pytest.raises(MessageError, match=says):
        ChatPrompter("").generate_prompt("go on", history=_history(arguments), format=fmt)


@pytest.mark.parametrize("fmt", DIALECTS)
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_arguments_dict_holding_nan_or_infinity_is_refused(value: float, fmt: str) -> None:
    with pytest.raises(MessageError, match=r"tool_calls\[0\]: arguments are not valid JSON \(-?(NaN|Infinity) is not"):
        ChatPrompter("").generate_prompt("go on", history=_history({"x": [1, value]}), format=fmt)


@pytest.mark.parametrize("fmt", DIALECTS)
def test_a_tool_schema_holding_nan_is_refused(fmt: str) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "number", "maximum": math.nan}}}
    tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
    with pytest.raises(ToolsError, match="NaN is not a JSON value"):
        ChatPrompter("").generate_prompt("hi", tools=tools, format=fmt)


def test_json_arguments_still_pass_through_as_written() -> None:
    text = '{"city": "Paris", "n": 1.5e3, "tags": ["a", "b"]}'
    body = ChatPrompter("").generate_prompt("go on", history=_history(text), format="openai")
    assert body["messages"][1]["tool_calls"][0]["function"]["arguments"] == text


def test_a_local_format_still_renders_them_as_the_template_does() -> None:
    from prompter import ModelFormat

    messages = [{"role": "user", "content": "go"}, *_history('{"x": Infinity}')]
    text = ModelFormat.get("qwen2.5").render(messages, add_generation_prompt=True)
    assert '"x": Infinity' in text
