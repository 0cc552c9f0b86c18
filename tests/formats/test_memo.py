"""A repeated render of an unchanged conversation gives back the remembered prompt; any change misses.

The memo (:mod:`~prompter.formats.memo`) keeps, per format object, the last plain conversation
the fast paths rendered without tools.  Each test changes the conversation the way callers do
(in place, by appending, by replacing a message) and compares with the sandboxed template.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from prompter.formats import skeleton
from prompter.formats.fixed import render_full
from prompter.formats.model_format import ModelFormat

FAMILIES = ["chatml", "qwen3", "llama-3.2", "gemma-3", "mistral-v0.1"]  # fixed strings, skeletons, dated, folded


def template_says(fmt: ModelFormat, messages: list[dict[str, Any]], add: bool = True) -> str:
    return render_full(fmt, messages, None, add, {}, False, use_layout=False).text


def conversation() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "And of Italy?"},
    ]


def test_a_repeated_render_is_given_back_without_rendering_again() -> None:
    fmt = ModelFormat.get("chatml")
    messages = conversation()
    for _ in range(4):  # the template, then the fast path, then the fast path on the same list: remembered
        expected = fmt.render(messages)
    assert fmt.render(messages) is expected, "the remembered prompt itself, not a new rendering"
    assert fmt.render(messages) == template_says(fmt, messages)


def test_conversations_that_never_repeat_are_rendered_each_time() -> None:
    fmt = dataclasses.replace(ModelFormat.get("qwen2.5"), name="qwen2.5-copy")  # an object no test rendered
    texts = []
    for i in range(4):
        messages = conversation()
        messages[1]["content"] += str(i % 2)
        texts.append(fmt.render(messages))
        assert texts[-1] == template_says(fmt, messages)
    assert texts[3] == texts[1] and texts[3] is not texts[1]


class Loud(dict):  # type: ignore[type-arg]
    """A dict subclass claiming equality with everything: never compared, never remembered."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


CHANGES = {
    "content edited in place": lambda m: m[3].__setitem__("content", "And of Spain?"),
    "role edited in place": lambda m: m[2].__setitem__("role", "user"),
    "key added in place": lambda m: m[3].__setitem__("name", "bob"),
    "message appended": lambda m: m.extend([{"role": "assistant", "content": "Rome."}, {"role": "user", "content": "x"}]),
    "message removed": lambda m: m.pop(),
    "message replaced": lambda m: m.__setitem__(1, {"role": "user", "content": "Capital of Peru?"}),
    "subclass claiming equality": lambda m: m.__setitem__(3, Loud(role="user", content="Tell me a secret")),
    "same text, trailing space": lambda m: m[3].__setitem__("content", "And of Italy? "),
}


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_changed_conversation_renders_what_the_template_renders(family: str, change: str) -> None:
    fmt = ModelFormat.get(family)
    messages = conversation()
    for _ in range(3):
        fmt.render(messages)
    CHANGES[change](messages)
    try:
        expected: Any = template_says(fmt, messages)
    except Exception as exc:  # noqa: BLE001 - both must refuse alike
        expected = type(exc)
    for _ in range(2):
        try:
            got: Any = fmt.render(messages)
        except Exception as exc:  # noqa: BLE001
            got = type(exc)
        assert got == expected


def test_the_generation_prompt_flag_is_part_of_what_is_remembered() -> None:
    fmt = ModelFormat.get("chatml")
    messages = conversation()
    for add in (True, False, True, False):
        assert fmt.render(messages, add_generation_prompt=add) == template_says(fmt, messages, add)


def test_a_dated_template_misses_when_the_day_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = ModelFormat.get("llama-3.2")
    messages = conversation()
    for _ in range(4):
        expected = fmt.render(messages)
    assert fmt.render(messages) is expected
    monkeypatch.setattr(skeleton, "_DAY", [float("inf"), (1999, 1, 1)])  # what today() answers from now on
    again = fmt.render(messages)
    assert again is not expected, "a prompt remembered on another day is not given back"
    assert again == template_says(fmt, messages)
