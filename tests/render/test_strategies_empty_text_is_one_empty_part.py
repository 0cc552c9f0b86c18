"""Under a strategy, an empty text is a list of one empty part, as AgentScope 0.1.6's OpenAI and
DashScope formatters write it (a ``Msg`` with ``""`` content still has its text block).

Before, ``""`` stayed a bare string while every other message of the same body was a part list.
Beside tool calls AgentScope has no text block, so there the content is left as it is.
"""

from __future__ import annotations

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter


@pytest.mark.parametrize("strategy", ["chat", "auto"])
def test_openai_empty_text_is_one_empty_text_part(strategy: str) -> None:
    said = [{"role": "user", "name": "Bob", "content": ""}, {"role": "user", "name": "Al", "content": "x"}]
    body = ChatPrompter(system="").generate_prompt(said, format="openai", strategy=strategy)
    CHECKS["openai"](body)
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": ""}], "name": "Bob"},
        {"role": "user", "content": [{"type": "text", "text": "x"}], "name": "Al"},
    ]


@pytest.mark.parametrize("strategy", ["chat", "auto"])
def test_dashscope_empty_text_is_one_empty_text_item(strategy: str) -> None:
    said = [
        {"role": "user", "content": ""},
        {"role": "assistant", "content": "Yes?"},
        {"role": "user", "content": "Rain?"},
    ]
    body = ChatPrompter(system="").generate_prompt(said, format="dashscope", strategy=strategy)
    CHECKS["dashscope"](body)
    assert [m["content"] for m in body["input"]["messages"]] == [[{"text": ""}], [{"text": "Yes?"}], [{"text": "Rain?"}]]


@pytest.mark.parametrize("dialect", ["openai", "dashscope"])
def test_empty_text_beside_tool_calls_is_left_as_it_is(dialect: str) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
    said = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "18"},
    ]
    body = ChatPrompter(system="").generate_prompt(said, format=dialect, strategy="chat")
    messages = body["messages"] if dialect == "openai" else body["input"]["messages"]
    assert messages[1]["content"] == "" and messages[2]["content"] == "18"


def test_without_a_strategy_an_empty_text_stays_a_string() -> None:
    body = ChatPrompter(system="").generate_prompt([{"role": "user", "content": ""}], format="openai")
    assert body["messages"] == [{"role": "user", "content": ""}]
