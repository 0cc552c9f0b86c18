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
from collections.abc import Mapping
from typing import Any

from prompter.errors import MessageError, MissingSlotError, PromptTypeError
from prompter.instruction import InstructionTemplate

__all__ = ["join"]


def _text(value: object, where: str) -> str:
    """Content as text: a str as is, numbers and bools as ``str()`` does, other JSON values as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        raise PromptTypeError(f"{where}: expected text or a JSON value, got {type(value).__name__}") from None


def _filled(text: str, format_map: Mapping[str, Any] | None, where: str) -> str:
    if format_map is None:
        return text
    template = InstructionTemplate(text)
    missing = [slot for slot in template.slots if slot not in format_map]
    if missing:
        raise MissingSlotError(f"{where}: format_map has no value for {{{missing[0]}}}; add it or write {{{{ }}}} ")
    return template.fill({slot: _text(format_map[slot], f"format_map[{slot!r}]") for slot in template.slots})


def _message(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    if "content" not in item:
        raise MessageError(f"{where}: a message needs 'content'")
    out: dict[str, Any] = {}
    if "name" in item:
        out["name"] = _text(item["name"], f"{where}.name")
    out["role"] = _text(item["role"], f"{where}.role") if "role" in item else "assistant"
    out["content"] = _text(item["content"], f"{where}.content")
    return out


def _line(item: Mapping[str, Any], where: str) -> str:
    if item.get("content") is None:
        raise MessageError(f"{where}: a message needs 'content'")
    speaker = item.get("name") or item.get("role")
    content = _text(item["content"], f"{where}.content")
    return content if not speaker else f"{_text(speaker, where + '.name')}: {content}"


def _as_text(parts: tuple[Any, ...], format_map: Mapping[str, Any] | None, where: str) -> str:
    lines: list[str] = []
    for i, part in enumerate(parts):
        here = f"{where}[{i}]"
        if part is None:
            continue
        if isinstance(part, (list, tuple)):
            if part:  # an empty memory adds no empty line
                lines.append(_as_text(tuple(part), None, here))
        elif isinstance(part, Mapping):
            lines.append(_line(part, here))
        elif isinstance(part, str):
            lines.append(_filled(part, format_map, here))
        else:
            lines.append(_text(part, here))
    return "\n".join(lines)


def _as_messages(parts: tuple[Any, ...], format_map: Mapping[str, Any] | None, where: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for i, part in enumerate(parts):
        here = f"{where}[{i}]"
        if part is None:
            continue
        if isinstance(part, (list, tuple)):
            messages.extend(_as_messages(tuple(part), None, here))
        elif isinstance(part, Mapping):
            messages.append(_message(part, here))
        else:
            text = _filled(part, format_map, here) if isinstance(part, str) else _text(part, here)
            messages.append({"role": "assistant", "content": text})
    return messages


def join(*parts: Any, format_map: Mapping[str, Any] | None = None, as_messages: bool = False) -> Any:
    """Join prompt parts into one string, or (``as_messages=True``) a list of message dicts.

    ``None`` parts are left out. In a string, a message dict becomes a ``name: content`` line
    (the role when it has no name) and a list is joined the same way; in a list of messages, a
    plain string becomes ``{"role": "assistant", "content": ...}`` as AgentScope writes it, and a
    dict keeps its ``name`` and ``role`` (``"assistant"`` when absent). Non-string content is
    JSON-encoded. The caller's objects are never changed.
    """
    if format_map is not None and not isinstance(format_map, Mapping):
        raise PromptTypeError(f"format_map: expected a dict, got {type(format_map).__name__}")
    if type(as_messages) is not bool:
        raise PromptTypeError(f"as_messages: expected a bool, got {type(as_messages).__name__}")
    if as_messages:
        return _as_messages(parts, format_map, "parts")
    return _as_text(parts, format_map, "parts")
