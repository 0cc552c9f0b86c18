"""``Layout.render`` (the hot loop, with the strings between contents joined once) gives what
``Layout.pieces`` (the reference loop, one string at a time) gives, and declines the same input.

Every shipped family's layout, plus variants with each precondition (stripped, non-empty,
avoided literals), on well-formed conversations and on ones the fixed strings must decline:
no role, no content, extra keys, roles out of turn, a system message alone, non-dict messages.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from prompter.formats.derive import Layout, derive_layout
from prompter.formats.model_format import ModelFormat

TEMPLATES = Path(__file__).resolve().parents[2] / "prompter" / "formats" / "chat_templates"
FAMILIES = [e["family"] for e in json.loads((TEMPLATES / "index.json").read_text(encoding="utf-8"))]


def _layouts() -> list[tuple[str, Layout]]:
    found = []
    for family in FAMILIES:
        fmt = ModelFormat.get(family)
        if fmt.chat_template is None:
            continue
        layout = derive_layout(fmt.chat_template, fmt.bos_token, fmt.eos_token, None)
        if layout is not None:
            found.append((family, layout))
    return found


def _variants(layout: Layout) -> list[Layout]:
    return [
        layout,
        dataclasses.replace(layout, strip=True),
        dataclasses.replace(layout, nonempty=True),
        dataclasses.replace(layout, avoid=("</think>",)),
        dataclasses.replace(layout, strip=True, nonempty=True, avoid=("<b>",)),
        dataclasses.replace(layout, system_ok=False, default_block=None),
    ]


def _turns(n: int, text: str = "Question {i}") -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": text.format(i=i)} for i in range(n)
    ]


SYSTEM = {"role": "system", "content": "  Be brief. \n"}
CONVERSATIONS: dict[str, Any] = {
    "one turn": _turns(1),
    "three turns": _turns(3),
    "assistant last": _turns(4),
    "system first": [SYSTEM, *_turns(5)],
    "padded text": _turns(3, text="  padded {i} \n"),
    "empty text": [SYSTEM, *_turns(2, text="")],
    "a literal": _turns(3, text="a </think> {i} <b>"),
    "system alone": [SYSTEM],
    "empty": [],
    "not a list": tuple(_turns(2)),
    "no role": [{"content": "hi"}],
    "no content": [{"role": "user"}],
    "no role later": [*_turns(2), {"content": "hi", "name": "x"}],
    "extra key": [{"role": "user", "content": "hi", "name": "bob"}],
    "out of turn": [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "hi"}],
    "two users": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
    "a tool result": [*_turns(1), {"role": "tool", "content": "21"}],
    "not text": [{"role": "user", "content": ["hi"]}],
    "not a dict": [*_turns(1), ["assistant", "hi"]],
    "system not text": [{"role": "system", "content": None}, *_turns(1)],
}


@pytest.mark.parametrize(("family", "layout"), _layouts(), ids=[f for f, _ in _layouts()])
def test_render_gives_the_pieces_joined(family: str, layout: Layout) -> None:
    for variant in _variants(layout):
        for name, messages in CONVERSATIONS.items():
            for add in (True, False):
                pieces = variant.pieces(messages, add)
                expected = None if pieces is None else "".join(pieces)
                assert variant.render(messages, add) == expected, (family, name, add, variant)


def test_the_joined_strings_follow_the_layout() -> None:
    layout = _layouts()[0][1]
    changed = dataclasses.replace(layout, eoh="<END>")
    assert "<END>" in changed.render(_turns(2), True)  # type: ignore[operator]
    assert "<END>" not in (layout.render(_turns(2), True) or "")
