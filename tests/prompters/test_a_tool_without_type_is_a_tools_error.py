"""A tool definition without ``"type": "function"`` is a ToolsError naming the field and the remedy.

OpenAI, Ollama, DashScope and Zhipu require ``tools[i].type``; prompter sent such a tool as given, so the
request failed at the API (``Missing required parameter: 'tools[0].type'``) instead of here, as the
documented rule says ("anything else is a ToolsError naming the field").
"""

from __future__ import annotations

import pytest

from prompter import AlpacaPrompter, ChatPrompter
from prompter.errors import ToolsError

UNTYPED = {"function": {"name": "get_weather", "parameters": {"type": "object"}}}
TYPED = {"type": "function", **UNTYPED}


@pytest.mark.parametrize("fmt", [None, "openai", "anthropic", "ollama", "dashscope", "zhipu"])
def test_a_tool_without_type_at_call_time_is_a_tools_error(fmt: str | None) -> None:
    with pytest.raises(ToolsError, match=r"tools\[1\]\.type: missing; add \"type\": \"function\""):
        ChatPrompter("Hi.").generate_prompt("x", tools=[TYPED, UNTYPED], format=fmt)  # type: ignore[arg-type]


def test_a_tool_without_type_at_construction_is_a_tools_error() -> None:
    for make in (ChatPrompter, AlpacaPrompter):
        with pytest.raises(ToolsError, match=r"tools\[0\]\.type"):
            make("Hi.", tools=[UNTYPED])


def test_a_typed_tool_is_sent_as_given() -> None:
    body = ChatPrompter("Hi.").generate_prompt("x", tools=[TYPED], format="openai")
    assert body["tools"] == [TYPED]
    assert UNTYPED == {"function": {"name": "get_weather", "parameters": {"type": "object"}}}
