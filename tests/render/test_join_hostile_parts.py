"""Threat: ``prompter.join``'s parts and ``format_map`` as an attacker (or a careless caller) shapes them.

``join`` walked the caller's parts directly: a memory nested thousands of lists deep, or a list that
contains itself, ran into ``RecursionError``; a ``Mapping`` whose ``get`` or ``__getitem__`` raises, a
``format_map`` whose ``__contains__`` raises, or a speaker name whose ``__len__`` raises let the
caller's own exception out. Every part is now read once into plain data (bounded in depth, cycles
refused, a str subclass by its characters), so each call ends in a result or a ``PromptError``
naming the part, and the caller's objects are untouched.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import prompter
from prompter.errors import PromptError, PromptTypeError


class Boom(Exception):
    pass


class LenRaises(str):
    def __len__(self) -> int:
        raise Boom("hostile __len__")


class GetRaises(dict):  # type: ignore[type-arg]
    def get(self, key: Any, default: Any = None) -> Any:
        raise Boom("hostile get")


class ContainsRaises(dict):  # type: ignore[type-arg]
    def __contains__(self, key: object) -> bool:
        raise Boom("hostile __contains__")


class ItemRaises(Mapping):  # type: ignore[type-arg]
    def __getitem__(self, key: Any) -> Any:
        raise Boom("hostile __getitem__")

    def __iter__(self) -> Iterator[str]:
        return iter(["content"])

    def __len__(self) -> int:
        return 1


def _nested(depth: int) -> list[Any]:
    outer: list[Any] = []
    inner = outer
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return outer


def _cycle() -> list[Any]:
    memory: list[Any] = [{"name": "Bob", "content": "hi"}]
    memory.append(memory)
    return memory


@pytest.mark.parametrize("as_messages", [False, True], ids=["string", "messages"])
@pytest.mark.parametrize(
    "make",
    [
        lambda: ("Intro", _nested(5000)),
        lambda: ("Intro", _cycle()),
        lambda: ({"name": "Bob", "content": _nested(5000)},),
        lambda: ("Intro", ItemRaises()),
    ],
    ids=["memory-5000-deep", "memory-containing-itself", "content-5000-deep", "mapping-getitem-raises"],
)
def test_unreadable_parts_give_a_prompt_error_naming_the_part(make: Any, as_messages: bool) -> None:
    with pytest.raises(PromptTypeError, match=r"parts\[\d\]"):
        prompter.join(*make(), as_messages=as_messages)


@pytest.mark.parametrize("as_messages", [False, True], ids=["string", "messages"])
def test_a_hostile_speaker_name_and_message_are_read_by_their_plain_data(as_messages: bool) -> None:
    memory = [{"name": LenRaises("Bob"), "content": "hi"}, GetRaises(name="Ann", content="yo")]
    before = copy.deepcopy(memory)
    out = prompter.join("Intro", memory, as_messages=as_messages)
    if as_messages:
        assert out[1:] == [
            {"name": "Bob", "role": "assistant", "content": "hi"},
            {"name": "Ann", "role": "assistant", "content": "yo"},
        ]
        assert all(type(m["name"]) is str for m in out[1:])
    else:
        assert out == "Intro\nBob: hi\nAnn: yo"
    assert memory == before


def test_a_format_map_with_hostile_methods_is_read_as_plain_data() -> None:
    assert prompter.join("You are {role}.", format_map=ContainsRaises(role="a judge")) == "You are a judge."


def test_joining_never_raises_anything_but_a_prompt_error_on_deep_or_cyclic_format_map() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    for format_map in ({"x": _nested(5000)}, {"x": cyclic}):
        with pytest.raises(PromptError, match=r"format_map"):
            prompter.join("{x}", format_map=format_map)


def test_prompters_own_message_is_joined_as_a_message_not_as_a_tuple_of_fields() -> None:
    from prompter.messages import Message

    said = Message("user", "hi", name="Bob")
    assert prompter.join("Intro", [said]) == "Intro\nBob: hi"  # was "Intro\nuser\nhi\nNone\nBob\nFalse"
    assert prompter.join(said, as_messages=True) == [{"name": "Bob", "role": "user", "content": "hi"}]
