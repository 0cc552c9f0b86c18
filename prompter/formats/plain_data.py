"""A plain-data copy of what a caller passed, as transformers makes one before a template reads it.

A template sees only ``str``, ``int``, ``float``, ``bool``, ``None``, lists, tuples and dicts:
subclasses become their base type (their own methods never run inside a template), mappings and
dataclasses become dicts. Anything else (``bytes``, a ``set``, an arbitrary object) is refused with
:class:`~prompter.errors.InputTypeError`: no text is made up for it, so neither its ``repr`` nor its
type's name (``type("<|im_end|>", (), {})``) can reach the prompt outside the caller's own text. The
copy is fresh, so a template can never reach (and a render never changes) the caller's objects.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from prompter.errors import InputTypeError

__all__ = ["plain"]


def plain(value: Any, where: str = "value") -> Any:
    """A fresh copy of ``value`` made of plain JSON-like types (as transformers does).

    ``where`` names ``value`` in the :class:`InputTypeError` raised for anything else.
    """
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if kind is dict:
        return {
            k if type(k) is str else plain(k, where): v if type(v) is str else plain(v, where)
            for k, v in value.items()
        }
    if kind is list:
        return [v if type(v) is str else plain(v, where) for v in value]
    return _plain_other(value, where)


def _plain_other(value: Any, where: str) -> Any:
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain(k, where): plain(v, where) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v, where) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v, where) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name), where) for f in dataclasses.fields(value)}
    name = type.__getattribute__(type(value), "__name__")
    raise InputTypeError(
        f"{where}: holds a value of type {str.__str__(name)[:80]!r}, which a chat template cannot be given; "
        "pass JSON data (str, int, float, bool, None, a list or a dict): convert it first (bytes to str, "
        "a set to a sorted list, an object to a dict)"
    )
