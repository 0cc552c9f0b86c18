"""Threat: ``prompter.join``'s ``format_map`` values and specs as an attacker would choose them.

A str or int subclass whose ``__str__``/``__format__``/``__repr__`` raise (a lazy proxy) let its
own exception out; an int past Python's 4,300-digit limit raised a bare ``ValueError``; and a
spec width such as ``{x:>99999999999}`` allocated until ``MemoryError``. Each is now a
``PromptError`` (or the value's plain characters), and the caller's objects are untouched.
"""

from __future__ import annotations

from typing import Any

import pytest

import prompter
from prompter.errors import PromptError


class Boom(Exception):
    pass


def _boom(*args: object, **kwargs: object) -> Any:
    raise Boom("hostile")


class HostileStr(str):
    __str__ = __repr__ = __format__ = __eq__ = _boom

    def __hash__(self) -> int:
        return 1


class HostileInt(int):
    __str__ = __repr__ = __format__ = _boom


@pytest.mark.parametrize(
    ("text", "value", "expected"),
    [
        ("a {x}", HostileStr("v"), "a v"),
        ("a {x!r}", HostileStr("v"), "a 'v'"),
        ("a {x:>3}", HostileStr("v"), "a   v"),
        ("a {x:03}", HostileInt(7), "a 007"),
        ("a {x}", {"k": [HostileStr("z")]}, "a {'k': ['z']}"),
    ],
    ids=["str", "str-repr", "str-spec", "int-spec", "nested"],  # never the values' own str()
)
def test_a_hostile_value_is_written_from_its_plain_characters(text: str, value: Any, expected: str) -> None:
    assert prompter.join(text, format_map={"x": value}) == expected


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a {x}", 10**5000),
        ("a {x!r}", 10**5000),
        ("a {x:,}", 10**5000),
        ("a {x:>99999999999}", 1),
        ("a {x:.99999999999f}", 1.5),
        ("a {x}", object()),
    ],
    ids=["huge-int", "huge-int-repr", "huge-int-spec", "huge-width", "huge-precision", "object"],
)
def test_an_unwritable_value_or_spec_is_a_prompt_error(text: str, value: Any) -> None:
    with pytest.raises(PromptError, match="format_map|width or precision"):
        prompter.join(text, format_map={"x": value})
