"""A merged history (``strategy="multi_agent"``) names the function of every tool result.

An OpenAI-style tool result carries only the id of the call it answers. Its
``<tool_result>`` line wrote ``"name": null`` although the call, a few lines above, names
the function; AgentScope's tool-result blocks always carry it, and every dialect's own
renderer finds it through the id. Now the line names it too, in every dialect.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from prompter import ChatPrompter
from prompter.render import DIALECTS

HISTORY = [
    {"role": "user", "name": "Alice", "content": "Weather?"},
    {
        "role": "assistant",
        "name": "Bob",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
]


def _merged_text(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_tool_result_line_names_the_function_its_call_named(dialect: str) -> None:
    body = ChatPrompter(system="S").generate_prompt("Go on", history=HISTORY, format=dialect, strategy="multi_agent")
    line = {"type": "tool_result", "id": "c1", "name": "weather", "output": "sunny"}
    expected = f"<tool_result>{json.dumps(line, ensure_ascii=False)}</tool_result>"
    assert json.dumps(expected)[1:-1] in _merged_text(body)


def test_a_tool_result_without_a_matching_call_keeps_its_own_name_or_none() -> None:
    history = [{"role": "tool", "tool_call_id": "gone", "name": "lookup", "content": "x"},
               {"role": "tool", "tool_call_id": "gone2", "content": "y"}]
    text = ChatPrompter(system="").generate_prompt("q", history=history, format="zhipu", strategy="multi_agent")
    content = text["messages"][0]["content"]
    assert '"id": "gone", "name": "lookup"' in content
    assert '"id": "gone2", "name": null' in content
