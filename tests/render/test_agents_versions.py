"""Which AgentScope version's body forms a call gets (docs/agents.md, "Strategies").

A strategy asks for what AgentScope's formatters do: 0.1.x writes every text of an Anthropic,
DashScope or OpenAI message as a list of content parts (``tests/render/data/agentscope.json`` records it);
``history_header="## Dialogue History"`` asks for 0.0.x, whose wrappers sent strings and whose one
merged OpenAI-format body (LiteLLM) starts the user message with the system prompt. Without a
strategy a body keeps its dialect's usual form.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter

SYSTEM = "You're a helpful assistant."
OLD = "## Dialogue History"
SAID = [
    {"role": "user", "name": "Alice", "content": "Weather?"},
    {"role": "assistant", "name": "Bob", "content": "Sunny."},
    {"role": "user", "name": "Alice", "content": "Thanks."},
]


def _render(dialect: str, said: Any = SAID, **options: Any) -> Any:
    return ChatPrompter(system=SYSTEM).generate_prompt(copy.deepcopy(said), format=dialect, **options)


@pytest.mark.parametrize("strategy", ["chat", "auto", "multi_agent"])
def test_dashscope_under_a_strategy_writes_text_as_agentscope_0_1_does(strategy: str) -> None:
    body = _render("dashscope", strategy=strategy)
    CHECKS["dashscope"](body)
    messages = body["input"]["messages"]
    assert messages[0] == {"role": "system", "content": [{"text": SYSTEM}]}
    assert all(isinstance(m["content"], list) and m["content"] for m in messages)
    if strategy != "multi_agent":
        assert messages[1:] == [
            {"role": "user", "content": [{"text": "Weather?"}]},
            {"role": "assistant", "content": [{"text": "Sunny."}]},
            {"role": "user", "content": [{"text": "Thanks."}]},
        ]


@pytest.mark.parametrize("options", [{}, {"history_header": OLD}, {"strategy": "multi_agent", "history_header": OLD}])
def test_dashscope_without_a_strategy_or_under_0_0_x_keeps_strings(options: dict[str, Any]) -> None:
    body = _render("dashscope", **options)
    CHECKS["dashscope"](body)
    assert all(isinstance(m["content"], str) for m in body["input"]["messages"])


def test_dashscope_tool_results_stay_strings_under_a_strategy() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
    said = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "18 degrees"},
    ]
    body = _render("dashscope", said, strategy="chat")
    CHECKS["dashscope"](body)
    messages = body["input"]["messages"]
    assert messages[-1]["role"] == "tool" and messages[-1]["content"] == "18 degrees"
    assert messages[-2]["content"] == ""  # no text: nothing to list


@pytest.mark.parametrize("strategy", ["chat", "auto", "multi_agent"])
def test_anthropic_under_a_strategy_writes_text_blocks_and_a_string_system(strategy: str) -> None:
    body = _render("anthropic", strategy=strategy)
    CHECKS["anthropic"](body)
    assert body["system"] == SYSTEM  # AgentScope's wrapper sends its system prompt as the string
    for message in body["messages"]:
        assert message["content"] and all(block["type"] == "text" for block in message["content"])
    if strategy == "multi_agent":
        text = "## Conversation History\nAlice: Weather?\nBob: Sunny.\nAlice: Thanks."
        assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": text}]}]


def test_anthropic_without_a_strategy_keeps_strings() -> None:
    body = _render("anthropic")
    assert [m["content"] for m in body["messages"]] == ["Weather?", "Sunny.", "Thanks."]


@pytest.mark.parametrize("strategy", ["chat", "auto", "multi_agent"])
def test_openai_under_a_strategy_writes_text_as_agentscope_0_1_does(strategy: str) -> None:
    # 0.1.x's OpenAIFormatter writes [{"type": "text", "text": ...}] under every method
    body = _render("openai", strategy=strategy)
    CHECKS["openai"](body)
    assert body["messages"][0] == {"role": "system", "content": [{"type": "text", "text": SYSTEM}]}
    assert all(isinstance(m["content"], list) and m["content"] for m in body["messages"])


def test_openai_keeps_strings_without_a_strategy_or_under_the_0_0_x_header() -> None:
    # the plain form for servers that take only strings: no strategy, or 0.0.x's wrappers
    for options in ({}, {"strategy": "chat", "history_header": OLD}):
        body = _render("openai", **options)
        assert all(isinstance(m["content"], str) for m in body["messages"])


def test_an_openai_tool_result_keeps_its_string_under_a_strategy() -> None:
    said = [
        {"role": "user", "name": "Alice", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "name": "Bob",
            "content": "Let me check.",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "weather", "content": "18 degrees"},
    ]
    body = _render("openai", said=said, strategy="chat")
    CHECKS["openai"](body)
    assert body["messages"][-1]["content"] == "18 degrees"
    assert body["messages"][-2]["content"] == [{"type": "text", "text": "Let me check."}]


def test_openai_multi_agent_under_0_0_x_is_litellms_single_user_message() -> None:
    body = _render("openai", strategy="multi_agent", history_header=OLD)
    CHECKS["openai"](body)
    text = f"{SYSTEM}\n\n{OLD}\nAlice: Weather?\nBob: Sunny.\nAlice: Thanks."
    assert body == {"messages": [{"role": "user", "content": text}]}


def test_openai_multi_agent_under_0_1_x_keeps_the_system_message() -> None:
    body = _render("openai", strategy="multi_agent")
    assert body["messages"][0] == {"role": "system", "content": [{"type": "text", "text": SYSTEM}]}
    assert body["messages"][1]["content"][0]["text"].startswith("## Conversation History\n")


def test_a_system_message_keeps_its_name_in_openai() -> None:
    # AgentScope's system Msg is named "system"; given as a message, its name travels as every name does
    said = [{"role": "system", "name": "system", "content": SYSTEM}, *SAID]
    body = ChatPrompter(system="").generate_prompt(said, format="openai")
    CHECKS["openai"](body)
    assert body["messages"][0] == {"role": "system", "content": SYSTEM, "name": "system"}


@pytest.mark.parametrize("dialect", ["anthropic", "dashscope", "openai"])
def test_the_part_lists_leave_the_callers_messages_alone(dialect: str) -> None:
    said = copy.deepcopy(SAID)
    before = copy.deepcopy(said)
    body = ChatPrompter(system=SYSTEM).generate_prompt(said, format=dialect, strategy="chat")
    assert said == before
    assert body != ChatPrompter(system=SYSTEM).generate_prompt(said, format=dialect)
