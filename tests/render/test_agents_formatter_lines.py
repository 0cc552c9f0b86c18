"""The ``name: text`` lines of a merged history where AgentScope 0.1.6's formatters differ per dialect.

Read from AgentScope v0.1.6: ``src/agentscope/formatters/_dashscope_formatter.py``
(``format_multi_agent`` writes a line only ``if msg.get_text_content()``),
``_anthropic_formatter.py`` (``format_multi_agent`` writes one line per text block),
``_gemini_formatter.py`` and ``_formatter_base.py`` (a line whenever the text is not None).
0.0.x's DashScope wrappers (v0.0.4 ``src/agentscope/models/dashscope_model.py``) write every message.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter

OLD = "## Dialogue History"
EMPTY = [
    {"role": "user", "name": "Alice", "content": "Hi all"},
    {"role": "assistant", "name": "Bob", "content": ""},
    {"role": "assistant", "name": "Carol", "content": "Yo"},
    {"role": "user", "name": "Dave", "content": "Go"},
]
TWO_BLOCKS = [
    {"role": "assistant", "name": "Bob", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    {"role": "user", "name": "Alice", "content": "ok"},
    {"role": "assistant", "name": "Carol", "content": "c"},
]


def _render(said: Any, dialect: str, system: str = "Sys", **options: Any) -> Any:
    body = ChatPrompter(system=system).generate_prompt(copy.deepcopy(said), format=dialect, **options)
    CHECKS[dialect](body)
    return body


def test_dashscope_multi_agent_skips_a_message_with_empty_text_as_agentscope_0_1_does() -> None:
    """AgentScope v0.1.6 ``src/agentscope/formatters/_dashscope_formatter.py`` ``format_multi_agent``."""
    body = _render(EMPTY, "dashscope", strategy="multi_agent")
    assert body["input"]["messages"] == [
        {"role": "system", "content": [{"text": "Sys"}]},
        {"role": "user", "content": [{"text": "## Conversation History\nAlice: Hi all\nCarol: Yo\nDave: Go"}]},
    ]


def test_dashscope_auto_falling_back_to_the_merged_history_skips_a_message_with_empty_text() -> None:
    """AgentScope v0.1.6 ``_dashscope_formatter.py``: ``format_auto`` of four speakers is ``format_multi_agent``."""
    body = _render(EMPTY, "dashscope", strategy="auto")
    assert body["input"]["messages"][1]["content"] == [
        {"text": "## Conversation History\nAlice: Hi all\nCarol: Yo\nDave: Go"}
    ]


def test_dashscope_multi_agent_keeps_the_media_of_a_message_with_empty_text_as_agentscope_0_1_does() -> None:
    """AgentScope v0.1.6 ``_dashscope_formatter.py``: the text line is skipped, the image block is not."""
    said = [
        {
            "role": "assistant",
            "name": "Bob",
            "content": [
                {"type": "text", "text": ""},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
            ],
        },
        {"role": "user", "name": "Al", "content": "Nice"},
    ]
    body = _render(said, "dashscope", system="", strategy="multi_agent")
    assert body["input"]["messages"] == [
        {
            "role": "user",
            "content": [{"image": "https://example.com/a.png"}, {"text": "## Conversation History\nAl: Nice"}],
        }
    ]


@pytest.mark.parametrize(
    "dialect, options",
    [
        ("dashscope", {"history_header": OLD}),  # 0.0.x: v0.0.4 src/agentscope/models/dashscope_model.py
        ("gemini", {}),  # v0.1.6 _gemini_formatter.py: `if text_content is not None`
        ("zhipu", {}),  # v0.1.6 _formatter_base.py _format_multi_agent_for_common_models
        ("anthropic", {}),  # v0.1.6 _anthropic_formatter.py: a text block "" is still a line
    ],
)
def test_other_merged_histories_keep_the_line_of_a_message_with_empty_text(dialect: str, options: Any) -> None:
    """AgentScope v0.1.6 ``_gemini_formatter.py``, ``_formatter_base.py``, ``_anthropic_formatter.py``; v0.0.4
    ``models/dashscope_model.py``: only 0.1.x's DashScope formatter drops the line."""
    assert "\\nBob: \\nCarol: Yo" in str(_render(EMPTY, dialect, strategy="multi_agent", **options))


def test_anthropic_multi_agent_writes_one_line_per_text_block_as_agentscope_0_1_does() -> None:
    """AgentScope v0.1.6 ``src/agentscope/formatters/_anthropic_formatter.py`` ``format_multi_agent``."""
    body = _render(TWO_BLOCKS, "anthropic", system="", strategy="multi_agent")
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "## Conversation History\nBob: a\nBob: b\nAlice: ok\nCarol: c"}],
        }
    ]


def test_anthropic_multi_agent_writes_one_line_per_text_block_beside_a_tool_call() -> None:
    """AgentScope v0.1.6 ``_anthropic_formatter.py``: every text block is a line, a tool_use block its own."""
    said = [
        {
            "role": "assistant",
            "name": "Bob",
            "content": [{"type": "text", "text": "Let me look."}, {"type": "text", "text": "One moment."}],
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "user", "name": "Alice", "content": "So?"},
    ]
    text = _render(said, "anthropic", system="", strategy="multi_agent")["messages"][0]["content"][0]["text"]
    assert text.splitlines()[1:3] == ["Bob: Let me look.", "Bob: One moment."]
    assert text.splitlines()[3].startswith("<tool_use>")


@pytest.mark.parametrize("dialect", ["dashscope", "gemini", "zhipu"])
def test_other_merged_histories_write_a_message_of_several_text_blocks_on_one_line(dialect: str) -> None:
    """AgentScope v0.1.6 ``_dashscope_formatter.py``, ``_gemini_formatter.py``, ``_formatter_base.py`` write
    ``msg.get_text_content()``, one line per message (its blocks concatenated; prompter joins them with a
    newline, a deliberate difference in docs/agents.md)."""
    assert "Bob: a\\nb" in str(_render(TWO_BLOCKS, dialect, strategy="multi_agent"))
