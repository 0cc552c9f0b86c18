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

__all__ = ["plain", "plain_key", "stored_items"]


def plain(value: Any, where: str = "value") -> Any:
    """A fresh copy of ``value`` made of plain JSON-like types (as transformers does).

    ``where`` names ``value`` in the :class:`InputTypeError` raised for anything else.
    """
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if kind is dict:
        return {
            k if type(k) is str else plain_key(k, where): v if type(v) is str else plain(v, where)
            for k, v in value.items()
        }
    if kind is list:
        return [v if type(v) is str else plain(v, where) for v in value]
    return _plain_other(value, where)


def stored_items(value: Mapping[Any, Any], where: str = "value") -> list[tuple[Any, Any]]:
    """The key-value pairs of a mapping: a ``dict`` subclass's stored ones (its own ``items``, ``get`` or
    ``__iter__`` never run, so they can neither say something else nor raise); another mapping's by its
    ``items()``, a failure of which is an :class:`InputTypeError` naming *where*."""
    if isinstance(value, dict):
        return list(dict.items(value))
    try:
        return list(value.items())
    except Exception as exc:  # noqa: BLE001 - the caller's own code: named, never passed through raw
        name = type.__getattribute__(type(value), "__name__")
        raise InputTypeError(
            f"{where}: a mapping of type {str.__str__(name)[:80]!r} failed to give its items "
            f"({type(exc).__name__}); pass a plain dict"
        ) from None


def plain_key(key: Any, where: str = "value") -> Any:
    """A dict key as a template may be given it: JSON's kinds of keys (``str``, a number, a bool, None)."""
    if isinstance(key, (str, int, float)) or key is None:  # bool is an int
        return plain(key, where)
    name = type.__getattribute__(type(key), "__name__")
    raise InputTypeError(
        f"{where}: holds a dict key of type {str.__str__(name)[:80]!r}; JSON keys are strings: "
        "convert the key to a str"
    )


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
        return {plain_key(k, where): plain(v, where) for k, v in stored_items(value, where)}
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
