"""``"chat"`` never merges turns of different speakers, even when a tool result stands between them.

Anthropic and Gemini send a tool result inside the user turn, so Alice's words, the result and Carol's
words become one user turn with no names in it: who said what was lost. The messages that become one
API turn must share one speaker, or the conversation falls back to the merged history (docs/agents.md).
A result followed by one speaker's words still keeps the turns.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter

CALL = [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}]


def conversation(later_speaker: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "name": "Alice", "content": "Weather in Paris?"},
        {"role": "assistant", "name": "Bob", "content": "Checking.", "tool_calls": CALL},
        {"role": "user", "name": "Alice", "content": "Hurry, please."},
        {"role": "tool", "tool_call_id": "c1", "content": "18 degrees"},
        {"role": "user", "name": later_speaker, "content": "Take a coat?"},
    ]


def text_of(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False)


@pytest.mark.parametrize("dialect", ["anthropic", "gemini"])
def test_two_speakers_on_either_side_of_a_tool_result_fall_back_to_the_merged_history(dialect: str) -> None:
    said = conversation("Carol")
    before = copy.deepcopy(said)
    body = ChatPrompter(system="").generate_prompt(said, format=dialect, strategy="chat")
    CHECKS[dialect](body)
    assert said == before
    text = text_of(body)
    assert "## Conversation History" in text
    assert "Alice: Hurry, please." in text and "Carol: Take a coat?" in text


@pytest.mark.parametrize("dialect", ["anthropic", "gemini"])
def test_one_speaker_after_a_tool_result_keeps_the_turns(dialect: str) -> None:
    said = [m for m in conversation("Alice") if m["content"] != "Hurry, please."]
    body = ChatPrompter(system="").generate_prompt(said, format=dialect, strategy="chat")
    CHECKS[dialect](body)
    assert "## Conversation History" not in text_of(body)
    turns = body["messages"] if dialect == "anthropic" else body["contents"]
    assert len(turns) == 3  # Alice, Bob's call, the result with Alice's words
