"""``generate_prompt(None, history=...)`` adds an empty, unnamed user turn. It says nothing: the dialects
that need alternating turns fold it into the user turn before it, as they do in an unnamed chat. So it is
no third speaker: a two-party chat of named agents keeps its turns under ``"auto"`` (the default) and
``"chat"``, exactly as the same chat without names, instead of falling back to the merged history.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter

NAMED = [
    {"role": "user", "name": "Alice", "content": "Shall we go out?"},
    {"role": "assistant", "name": "Bob", "content": "It is raining."},
    {"role": "user", "name": "Alice", "content": "Then a film?"},
]
UNNAMED = [{k: v for k, v in m.items() if k != "name"} for m in NAMED]


@pytest.mark.parametrize("strategy", [None, "auto", "chat"])
@pytest.mark.parametrize("dialect", ["anthropic", "gemini", "dashscope"])
def test_a_two_party_chat_without_input_keeps_its_turns_as_without_names(dialect: str, strategy: Any) -> None:
    before = copy.deepcopy(NAMED)
    body = ChatPrompter(system="Be brief.").generate_prompt(None, history=NAMED, format=dialect, strategy=strategy)
    CHECKS[dialect](body)
    assert NAMED == before
    unnamed = ChatPrompter(system="Be brief.").generate_prompt(None, history=UNNAMED, format=dialect, strategy=strategy)
    assert body == unnamed
    assert "Conversation History" not in repr(body)


@pytest.mark.parametrize("dialect", ["anthropic", "gemini", "dashscope"])
def test_a_third_speaker_still_merges_without_input(dialect: str) -> None:
    said = [*NAMED, {"role": "user", "name": "Carol", "content": "I'm in."}]
    body = ChatPrompter(system="").generate_prompt(None, history=said, format=dialect)
    CHECKS[dialect](body)
    assert "Carol: I'm in." in repr(body)
