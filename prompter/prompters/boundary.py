"""The caller's objects, read once into plain data before anything else looks at them.

A prompter's promise is that every input ends in a result or a
:class:`~prompter.errors.PromptError`. Python itself breaks that promise on
values a caller can pass: ``str(10**5000)`` raises ``ValueError`` (the
int-to-str digit limit), ``json.dumps`` of 5,000 nested lists raises
``RecursionError``, a list that contains itself never ends, and any object
whose ``__str__`` / ``__eq__`` / ``__hash__`` or a dict subclass whose
``items`` raises turns a lookup into that object's exception.

So :func:`plain_copy` reads the caller's value once, without calling any of
its own methods where the builtin's storage can be read directly (the unbound
``dict.items``, ``list.__iter__``, ``str.__str__``), into fresh exact
``dict`` / ``list`` / ``tuple`` / ``str`` / ``int`` / ``float`` / ``bool`` /
``None``, bounded in depth and refusing self-containing containers. Anything
else is left as it is, for the validators to reject by its type name. The
rest of prompter only ever sees the copy, which also keeps the caller's
objects out of reach.

>>> class Loud(str):
...     def __str__(self): raise RuntimeError("no")
>>> type(plain_copy({"a": [Loud("x")]}, "input")["a"][0]) is str
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prompter.errors import PromptError, PromptTypeError, PromptValueError
from prompter.messages import ContentPart, Message, ToolCall

__all__ = ["MAX_DEPTH", "plain_copy", "shown", "slot_text"]

MAX_DEPTH = 100
"""How deep containers may nest in anything a caller passes (tool schemas rarely pass 20)."""

_EXACT = (str, int, float, bool, type(None))


class _Refused(Exception):
    """Internal: the copy met a value it cannot take; carries the message with the path."""


def plain_copy(value: Any, where: str, error: type[PromptError] = PromptTypeError) -> Any:
    """A fresh plain-data copy of ``value``; a value that cannot be read raises ``error`` naming ``where``."""
    kind = type(value)
    if kind is str or value is None:
        return value
    try:
        return _copy(value, where, 0, set())
    except _Refused as refused:
        raise error(str(refused)) from None
    except PromptError:
        raise
    except Exception as exc:  # the caller's own code raised while we read its object
        raise error(
            f"{where}: reading a {type(value).__name__} raised {type(exc).__name__}; "
            "pass plain str, int, float, bool, None, list and dict values"
        ) from None


def _copy(value: Any, where: str, depth: int, active: set[int]) -> Any:
    kind = type(value)
    if kind in _EXACT:
        return value
    if isinstance(value, str):
        return str.__str__(value)  # the characters, never the subclass's overrides
    if isinstance(value, int):
        return int.__pos__(value)  # an exact int (bool is final, so it never gets here)
    if isinstance(value, float):
        return float.__pos__(value)
    if isinstance(value, (Message, ToolCall, ContentPart)):
        value = _as_dict(value)  # prompter's own types are re-validated like the dicts they stand for
    elif not isinstance(value, (dict, list, tuple, Mapping)):
        return value  # bytes, objects, ...: left for the validators, which name the type
    if depth >= MAX_DEPTH:
        raise _Refused(f"{where}: nested more than {MAX_DEPTH} levels deep; flatten the value")
    if id(value) in active:
        raise _Refused(f"{where}: contains itself; pass a value without cycles")
    active.add(id(value))
    try:
        if isinstance(value, dict):
            pairs: list[tuple[Any, Any]] = list(dict.items(value))
        elif isinstance(value, Mapping):
            pairs = [(key, value[key]) for key in list(value)]
        elif isinstance(value, list):
            items = [_copy(item, f"{where}[{i}]", depth + 1, active) for i, item in enumerate(list.__iter__(value))]
            return items
        else:
            items = [_copy(item, f"{where}[{i}]", depth + 1, active) for i, item in enumerate(tuple.__iter__(value))]
            return tuple(items)
        copied: dict[Any, Any] = {}
        for key, item in pairs:
            plain_key = _key(key, where)
            copied[plain_key] = _copy(item, f"{where}[{shown(plain_key)}]", depth + 1, active)
        return copied
    finally:
        active.discard(id(value))


def _key(key: Any, where: str) -> Any:
    kind = type(key)
    if kind in _EXACT:
        return key
    if isinstance(key, str):
        return str.__str__(key)
    if isinstance(key, int):
        return int.__pos__(key)
    if isinstance(key, float):
        return float.__pos__(key)
    raise _Refused(f"{where}: dict keys must be str, got a {kind.__name__} key")


def _as_dict(value: Message | ToolCall | ContentPart) -> dict[str, Any]:
    """The message dict ``value`` was made from (or stands for), with everything it carries."""
    if isinstance(value, ContentPart):
        if value.type == "text":
            return {"type": "text", "text": value.text}
        if value.type == "image_url":
            image = {"url": value.url} if value.detail is None else {"url": value.url, "detail": value.detail}
            return {"type": "image_url", "image_url": image}
        key = f"{value.type}_url"  # audio_url, video_url: an audio or video part stays one
        return {"type": key, key: {"url": value.url}}
    if isinstance(value, ToolCall):
        # the caller's own JSON text of the arguments when there is one, as the dict it came from held
        text = value.arguments_json
        arguments = text if isinstance(text, str) and str.__len__(text) else value.arguments
        function = {"name": value.name, "arguments": arguments}
        call: dict[str, Any] = {"id": value.id, "type": "function", "function": function}
        if value.signature is not None:
            call["extra_content"] = {"google": {"thought_signature": value.signature}}
        return call
    out: dict[str, Any] = {"role": value.role, "content": None if value.content_null else value.content}
    if value.tool_calls:
        out["tool_calls"] = list(value.tool_calls)
    if value.tool_call_id is not None:
        out["tool_call_id"] = value.tool_call_id
    if value.name is not None:
        out["name"] = value.name
    if value.thinking:
        out["thinking_blocks"] = list(value.thinking)
    return out


def shown(value: object, limit: int = 40) -> str:
    """``value`` as error messages show it: the repr of a short str or a small number, else its type."""
    kind = type(value)
    if kind is str:
        text = repr(value)
        return text if len(text) <= limit else text[: limit - 4] + "...'"
    if kind is bool or value is None or kind is float or (kind is int and -(10**30) < value < 10**30):  # type: ignore[operator]
        return repr(value)
    return f"a {kind.__name__}"


def slot_text(value: Any, where: str) -> str:
    """The text a plain scalar fills a slot with. An int past Python's int-to-str limit is an error."""
    if type(value) is str:
        return value
    try:
        return str(value)
    except ValueError:
        raise PromptValueError(
            f"{where}: an int this long (over 4,300 digits) cannot be turned into text by Python; "
            "pass it as a str"
        ) from None
