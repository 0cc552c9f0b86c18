"""A slot named many times cannot make ``generate_prompt`` allocate without bound.

``"{a}" * 1000`` with a value of 16 001 characters asks for 16 001 000 characters: before the fix the
prompter built them (and a server passing a caller's instruction through was made to allocate gigabytes
by a request of kilobytes). Now the filled length is worked out first and anything over
``MAX_FILLED_CHARS`` is a PromptValueError naming the slot, before the text exists.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest

from prompter import AlpacaPrompter, ChatPrompter
from prompter.errors import PromptValueError
from prompter.instruction import MAX_FILLED_CHARS, InstructionTemplate

VALUE = "x" * (MAX_FILLED_CHARS // 1000 + 1)
REFUSED = r"slot \{a\}: the filled text would be 16001\d{3} characters, over the limit of 16000000"
CALLS = [
    (ChatPrompter, {"a": VALUE}, {}, "chat-dict-text"),
    (ChatPrompter, VALUE, {}, "chat-str-text"),
    (ChatPrompter, {"a": VALUE, "input": "hi"}, {"history": [["q", "a"]]}, "chat-history"),
    (ChatPrompter, {"a": VALUE}, {"format": "openai"}, "chat-openai"),
    (ChatPrompter, {"a": VALUE}, {"format": "anthropic"}, "chat-anthropic"),
    (ChatPrompter, {"a": VALUE}, {"model_format": "qwen2.5"}, "chat-qwen"),
    (AlpacaPrompter, {"a": VALUE}, {}, "alpaca-text"),
]


@pytest.mark.parametrize(("cls", "value", "options"), [c[:3] for c in CALLS], ids=[c[3] for c in CALLS])
def test_a_repeated_slot_cannot_amplify_a_small_input_into_a_huge_prompt(
    cls: Any, value: Any, options: dict[str, Any]
) -> None:
    prompter = cls("{a}" * 1000)
    tracemalloc.start()
    try:
        with pytest.raises(PromptValueError, match=REFUSED) as info:
            prompter.generate_prompt(value, **options)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "named 1000 time(s)" in str(info.value) and "shorten the value" in str(info.value)
    assert peak < MAX_FILLED_CHARS // 4  # refused before the text was built


def test_a_partial_fill_is_bounded_too() -> None:
    with pytest.raises(PromptValueError, match=r"slot \{a\}"):
        InstructionTemplate("{a}" * 1000 + "{b}").partial({"a": VALUE})


def test_a_fill_at_the_limit_is_built() -> None:
    template = InstructionTemplate("{a}" * 1000)
    value = "x" * (MAX_FILLED_CHARS // 1000)
    assert template.filled_length({"a": value}) == MAX_FILLED_CHARS
    assert len(template.fill({"a": value})) == MAX_FILLED_CHARS
