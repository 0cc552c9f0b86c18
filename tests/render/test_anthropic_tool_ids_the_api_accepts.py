"""Anthropic refuses a ``tool_use`` id outside ``^[a-zA-Z0-9_-]+$`` with a 400; ids from other providers
(Kimi's ``functions.get_weather:0``, ids with dots or colons) must still reach it as ids it accepts, with a
call and its result still paired and two different ids still different."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from prompter import ChatPrompter

ACCEPTED = re.compile(r"^[a-zA-Z0-9_-]+$")


def _body(ids: list[str]) -> dict:
    history = []
    for i, call_id in enumerate(ids):
        call = {"id": call_id, "type": "function", "function": {"name": f"f{i}", "arguments": "{}"}}
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": call_id, "content": f"result {i}"})
    return ChatPrompter("").generate_prompt("go on", history=history, format="anthropic")


def _pairs(body: dict) -> list[tuple[str, str]]:
    uses = [b["id"] for m in body["messages"] for b in m["content"] if isinstance(b, dict) and b["type"] == "tool_use"]
    results = [
        b["tool_use_id"] for m in body["messages"] if isinstance(m["content"], list)
        for b in m["content"] if b["type"] == "tool_result"
    ]  # fmt: skip
    return list(zip(uses, results, strict=True))


def test_a_kimi_style_id_is_sent_as_an_id_anthropic_accepts() -> None:
    pairs = _pairs(_body(["functions.get_weather:0"]))
    assert len(pairs) == 1
    use, result = pairs[0]
    assert ACCEPTED.match(use) and use == result


def test_an_id_anthropic_accepts_is_sent_unchanged() -> None:
    assert _pairs(_body(["toolu_01A-b_9"])) == [("toolu_01A-b_9", "toolu_01A-b_9")]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=20).filter(lambda s: s.strip()), min_size=1, max_size=4, unique=True))
def test_every_id_becomes_an_accepted_one_paired_with_its_result_and_distinct(ids: list[str]) -> None:
    pairs = _pairs(_body(ids))
    assert len(pairs) == len(ids)
    for use, result in pairs:
        assert ACCEPTED.match(use), use
        assert use == result
    assert len({use for use, _ in pairs}) == len(ids)
