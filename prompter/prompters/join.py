"""``join``: AgentScope's ``PromptEngine.join`` for prompts put together by hand.

Parts are strings (instructions, hints), message dicts (memory) and lists of them, joined
into one string (``name: content`` lines) or into a list of message dicts. ``format_map``
fills ``{slot}``\\ s of the *string* parts only, in one pass: text inside messages (history,
retrieved documents) is never scanned, so its braces never raise and are never filled.

>>> join("You are {role}.", [{"name": "Bob", "content": "Hi {all}"}], format_map={"role": "a judge"})
'You are a judge.\\nBob: Hi {all}'
>>> join("Be brief.", {"role": "user", "content": "Hi"}, as_messages=True)
[{'role': 'assistant', 'content': 'Be brief.'}, {'role': 'user', 'content': 'Hi'}]
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable, Mapping
from typing import Any

from prompter.errors import MessageError, MissingSlotError, PromptTypeError, PromptValueError
from prompter.instruction import InstructionTemplate
from prompter.prompters.boundary import plain_copy

__all__ = ["join"]


# what PromptEngine writes with Python's str(): text, numbers, bools, None and plain containers
_WRITTEN = (str, int, float, Mapping, list, tuple, type(None))


def _plain(value: object, where: str) -> Any:
    """*value* as plain data (a str subclass as its characters, a dict or list copied so), or a typed
    error: the caller's own ``__str__``, ``__format__`` or ``__repr__`` are never run."""
    plain = plain_copy(value, where, PromptTypeError)
    if not isinstance(plain, _WRITTEN):
        raise PromptTypeError(
            f"{where}: expected text, a number, None, a dict or a list, got {type(value).__name__}; "
            "convert it to str first"
        )
    return plain


def _written(value: object, where: str) -> str:
    """A value as AgentScope's string prompt writes it: Python's ``str()`` (``{'a': 1}``, ``None``).

    Other objects are refused: their ``str()`` is mostly a repr such as ``<object at 0x...>``."""
    plain = _plain(value, where)
    try:
        return str(plain)
    except ValueError:  # an int past Python's int-to-str limit
        raise PromptValueError(
            f"{where}: holds an int of over 4,300 digits, which Python cannot write; pass it as a str"
        ) from None


def _json(value: object, where: str) -> str:
    """Content of a message in a list prompt: text as is, other JSON values as JSON (``true``,
    ``{"a": 1}``), as AgentScope's ``to_openai_dict`` writes them."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        raise PromptTypeError(f"{where}: expected text or a JSON value, got {type(value).__name__}") from None


# str.format_map's reader of a string part: literal text, then a field's name, spec and conversion
_FORMATTER = string.Formatter()
_CONVERT: dict[str, Callable[[object], str]] = {"r": repr, "s": str, "a": ascii}
_DIGITS = re.compile(r"\d+")  # a spec's width and precision (and a digit used as its fill)
_MAX_WIDTH = 100_000  # {x:>99999999999} would allocate gigabytes before anything could stop it


def _format_fields(text: str) -> list[tuple[str, str | None, str, str | None]] | None:
    """``text`` read as ``str.format_map`` reads it, when every field is a plain name (``{x}``,
    ``{x:>8}``, ``{x!r}``); None when it would refuse the text or reach past a name (``{"a": 1}``,
    ``{0}``, ``{x.y}``, a lone brace): those braces are then literal text."""
    try:
        fields = list(_FORMATTER.parse(text))
    except ValueError:
        return None
    for _literal, name, spec, conversion in fields:
        if name is not None and (
            not name.isidentifier() or "{" in (spec or "") or (conversion is not None and conversion not in _CONVERT)
        ):
            return None
    return [(literal, name, spec or "", conversion) for literal, name, spec, conversion in fields]


def _filled(text: str, format_map: Mapping[str, Any] | None, where: str) -> str:
    """A string part with ``format_map``'s values, in one pass.

    Where ``str.format_map`` (what PromptEngine calls) reads the text, the result is its result:
    ``{{`` and ``}}`` are braces, ``{x:>8}`` and ``{x!r}`` format the value. Elsewhere only
    ``{identifier}`` slots are filled and every other brace stays as written."""
    if format_map is None:
        return text
    fields = _format_fields(text)
    if fields is None:
        template = InstructionTemplate(text)
        missing = [slot for slot in template.slots if slot not in format_map]
        if missing:
            raise MissingSlotError(f"{where}: format_map has no value for {{{missing[0]}}}; add it or write {{{{ }}}} ")
        return template.fill({slot: _written(format_map[slot], f"format_map[{slot!r}]") for slot in template.slots})
    out: list[str] = []
    for literal, name, spec, conversion in fields:
        out.append(literal)
        if name is None:
            continue
        if name not in format_map:
            raise MissingSlotError(f"{where}: format_map has no value for {{{name}}}; add it or write {{{{ }}}} ")
        value = _plain(format_map[name], f"format_map[{name!r}]")
        if any(int(digits) > _MAX_WIDTH for digits in _DIGITS.findall(spec)):
            raise PromptValueError(
                f"{where}: {{{name}:{spec}}} asks for a width or precision over {_MAX_WIDTH:,}; write a smaller one"
            )
        try:
            if conversion is not None:
                value = _CONVERT[conversion](value)
            out.append(format(value, spec))
        except (TypeError, ValueError) as exc:
            raise PromptValueError(
                f"{where}: format_map[{name!r}] cannot be written as {{{name}:{spec}}}: {exc}"
            ) from None
    return "".join(out)


def _content(item: Mapping[str, Any], where: str) -> Any:
    content = item.get("content")
    if content is None:
        # PromptEngine writes the whole dict's repr here (a list prompt: a message without content)
        raise MessageError(f"{where}: a message needs 'content' (text, a number, a dict or a list); got none")
    return content


def _message(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    content = _content(item, where)
    out: dict[str, Any] = {}
    if item.get("name") is not None:  # a name of None is no speaker (never one called "None")
        out["name"] = _written(item["name"], f"{where}.name")
    out["role"] = _written(item["role"], f"{where}.role") if item.get("role") is not None else "assistant"
    out["content"] = _json(content, f"{where}.content")
    return out


def _line(item: Mapping[str, Any], where: str) -> str:
    content = _written(_content(item, where), f"{where}.content")
    # plain data before any truth test: the caller's value (a numpy array) never decides it
    speaker = _plain(item.get("name"), f"{where}.name") or _plain(item.get("role"), f"{where}.role")
    return content if not speaker else f"{_written(speaker, where + '.name')}: {content}"


def _as_text(parts: tuple[Any, ...], format_map: Mapping[str, Any] | None, where: str, top: bool = True) -> str:
    lines: list[str] = []
    for i, part in enumerate(parts):
        here = f"{where}[{i}]"
        if part is None and top:
            continue  # PromptEngine leaves out None parts, but writes "None" for one inside a list
        if isinstance(part, (list, tuple)):
            if part:  # an empty memory adds no empty line
                lines.append(_as_text(tuple(part), None, here, top=False))
        elif isinstance(part, Mapping):
            lines.append(_line(part, here))
        elif isinstance(part, str):
            lines.append(_filled(part, format_map, here))
        else:
            lines.append(_written(part, here))
    return "\n".join(lines)


def _as_messages(
    parts: tuple[Any, ...], format_map: Mapping[str, Any] | None, where: str, top: bool = True
) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for i, part in enumerate(parts):
        here = f"{where}[{i}]"
        if part is None and top:
            continue
        if isinstance(part, (list, tuple)):
            messages.extend(_as_messages(tuple(part), None, here, top=False))
        elif isinstance(part, Mapping):
            messages.append(_message(part, here))
        else:
            text = _filled(part, format_map, here) if isinstance(part, str) else _written(part, here)
            messages.append({"role": "assistant", "content": text})
    return messages


def join(*parts: Any, format_map: Mapping[str, Any] | None = None, as_messages: bool = False) -> Any:
    """Join prompt parts into one string, or (``as_messages=True``) a list of message dicts.

    ``None`` parts are left out (inside a list, one is written ``None``, as AgentScope does). In a
    string, a message dict becomes a ``name: content`` line (the role when it has no name) and a
    list is joined the same way; other values, a message's non-string content and
    ``format_map``'s values are written as Python's ``str()`` writes them (``{'temp': 18}``). In a
    list of messages, a plain string becomes ``{"role": "assistant", "content": ...}`` as
    AgentScope writes it, a dict keeps its ``name`` and ``role`` (``"assistant"`` when absent), and
    its non-string content is JSON-encoded. A message without content is a :class:`MessageError`.
    The caller's objects are never changed.
    """
    if format_map is not None and not isinstance(format_map, Mapping):
        raise PromptTypeError(f"format_map: expected a dict, got {type(format_map).__name__}")
    if type(as_messages) is not bool:
        raise PromptTypeError(f"as_messages: expected a bool, got {type(as_messages).__name__}")
    # read once into plain data, bounded in depth and without cycles: nothing below calls the caller's
    # objects (a Mapping's get, a str subclass's __len__) or recurses without end
    parts = tuple(plain_copy(part, f"parts[{i}]", PromptTypeError) for i, part in enumerate(parts))
    format_map = plain_copy(format_map, "format_map", PromptTypeError)
    if as_messages:
        return _as_messages(parts, format_map, "parts")
    return _as_text(parts, format_map, "parts")
