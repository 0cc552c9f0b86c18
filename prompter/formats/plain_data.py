"""A plain-data copy of what a caller passed, as transformers makes one before a template reads it.

A template sees only ``str``, ``int``, ``float``, ``bool``, ``None``, lists, tuples and dicts:
subclasses become their base type (their own methods never run inside a template), mappings and
dataclasses become dicts, anything else its type's name in angle brackets. The copy is fresh, so a
template can never reach (and a render never changes) the caller's objects.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = ["plain"]


def plain(value: Any) -> Any:
    """A fresh copy of ``value`` made of plain JSON-like types (as transformers does)."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if kind is dict:
        return {k if type(k) is str else plain(k): v if type(v) is str else plain(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) is str else plain(v) for v in value]
    return _plain_other(value)


def _plain_other(value: Any) -> Any:
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return f"<{type(value).__name__}>"
