"""A conversation rendered again after a change renders what the template renders.

A format object goes straight to the fast paths that rendered its plain conversations
before (:mod:`~prompter.formats.hot`). Each test renders a conversation a few times, changes it
the way callers do (in place, by appending, by replacing a message) and compares with the
sandboxed template: nothing of an earlier call may leak into a later one.
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
    """A dict subclass claiming equality with everything."""

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


def test_the_generation_prompt_flag_is_read_on_every_call() -> None:
    fmt = ModelFormat.get("chatml")
    messages = conversation()
    for add in (True, False, True, False):
        assert fmt.render(messages, add_generation_prompt=add) == template_says(fmt, messages, add)


def test_a_dated_template_renders_the_new_day_when_the_day_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = ModelFormat.get("llama-3.2")
    messages = conversation()
    for _ in range(4):
        expected = fmt.render(messages)
    monkeypatch.setattr(skeleton, "_DAY", [float("inf"), (1999, 1, 1)])  # what today() answers from now on
    assert expected == template_says(fmt, messages)
    assert fmt.render(messages) == template_says(fmt, messages)  # the skeleton of the new day
