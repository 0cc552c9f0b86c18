"""Reading a decoded chat-completions answer strictly: the right shape, or a typed error naming where.

A server may answer well-formed JSON of the wrong shape (``{"choices": []}``,
``"message": "hi"``, ``"content": 42``, ``"tool_calls": [1]``, a list, ``null``).
Every such answer raises :class:`~modules.errors.APIResponseValidationError`
whose message names the path of the wrong value (``choices[0].message.content``)
and what was expected; nothing is silently turned into an empty answer.

Tolerated, because providers do it: ``content`` as a list of content parts
(the ``text`` of each part that has one is joined, other parts skipped), ``null`` wherever a
field is optional, tool-call ``arguments`` sent as a JSON object (re-encoded as
a string), and unknown extra fields.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from modules.base import Completion, ToolCall
from modules.errors import APIResponseValidationError

__all__ = [
    "completion_of",
    "invalid",
    "kind",
    "loads",
    "optional_str",
    "read_arguments",
    "read_object",
    "shown",
    "text_of",
]

#: What :func:`loads` returns for text that is not JSON (or nests past the recursion limit).
NOT_JSON: Any = object()


def loads(text: str) -> Any:
    """``json.loads(text)``, or :data:`NOT_JSON` (deep nesting included: a RecursionError is no answer either).

    Returns instead of raising, so the caller raises its typed error outside the
    handler and no ``__context__`` keeps the server's text.
    """
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return NOT_JSON


def shown(value: Any, limit: int = 80) -> str:
    """A short text for a decoded value in a message (never raises, whatever the nesting)."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (ValueError, TypeError, RecursionError):
            text = f"<{kind(value)} nested too deeply to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def kind(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def invalid(path: str, expected: str, value: Any, where: str = "the answer") -> APIResponseValidationError:
    return APIResponseValidationError(
        f"{where} has the wrong shape at {path}: expected {expected}, got {kind(value)} ({shown(value)}); "
        "the server does not speak the OpenAI chat-completions format (check base_url and model)"
    )


def read_object(value: Any, path: str, where: str = "the answer") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise invalid(path, "an object", value, where)
    return value


def optional_str(container: Mapping[str, Any], name: str, path: str, where: str = "the answer") -> str | None:
    value = container.get(name)
    if value is not None and not isinstance(value, str):
        raise invalid(f"{path}.{name}", "a string or null", value, where)
    return value


def text_of(content: Any, path: str, where: str = "the answer") -> str:
    """``content``: a string, null, or a list of content parts whose ``text`` parts are joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise invalid(path, "a string, an array of content parts or null", content, where)
    pieces = []
    for i, part in enumerate(content):
        part = read_object(part, f"{path}[{i}]", where)
        text = part.get("text")
        if text is None and part.get("type", "text") != "text":
            continue  # an image or another part without text
        if not isinstance(text, str):
            raise invalid(f"{path}[{i}].text", "a string", text, where)
        pieces.append(text)  # "text", "output_text"...: any part that carries text
    return "".join(pieces)


def read_arguments(value: Any, path: str, where: str = "the answer") -> str:
    """Tool-call ``arguments``: a string (an object is re-encoded; null is empty)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):  # a few providers send an object, not a string
        return json.dumps(value, ensure_ascii=False)
    raise invalid(path, "a JSON-encoded string", value, where)


def _tool_calls_of(message: Mapping[str, Any], path: str) -> tuple[ToolCall, ...]:
    calls = message.get("tool_calls")
    if calls is None:
        return ()
    if not isinstance(calls, list):
        raise invalid(f"{path}.tool_calls", "an array or null", calls)
    out = []
    for i, call in enumerate(calls):
        here = f"{path}.tool_calls[{i}]"
        call = read_object(call, here)
        ident = optional_str(call, "id", here) or ""
        function = read_object(call.get("function"), f"{here}.function")
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise invalid(f"{here}.function.name", "a non-empty string", name)
        arguments = read_arguments(function.get("arguments"), f"{here}.function.arguments")
        found = ToolCall(id=ident, type="function", function={"name": name, "arguments": arguments})
        extra = call.get("extra_content")
        if isinstance(extra, dict) and extra:  # Gemini's OpenAI-compatible API: the call's thought signature
            found["extra_content"] = extra
        out.append(found)
    return tuple(out)


def _first_choice(choices: list[Any]) -> tuple[dict[str, Any], str]:
    """The choice whose ``index`` is 0 (one without an index counts by its position), with its path.

    A stream reads the choice with index 0 too, so both forms answer with the same choice whatever the order.
    """
    for i, choice in enumerate(choices):
        here = f"choices[{i}]"
        choice = read_object(choice, here)
        index = choice.get("index")
        if index is None:
            index = i
        elif type(index) is not int:
            raise invalid(f"{here}.index", "an integer or null", index)
        if index == 0:
            return choice, here
    raise invalid("choices", "an array holding the choice with index 0 (or, without indexes, one first)", choices)


def completion_of(data: Any) -> Completion:
    """The :class:`Completion` in a decoded ``chat.completion`` body (its choice with index 0)."""
    body = read_object(data, "the top level")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise invalid("choices", "a non-empty array", choices)
    choice, here = _first_choice(choices)
    message = read_object(choice.get("message"), f"{here}.message")
    finish = optional_str(choice, "finish_reason", here)
    usage = body.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise invalid("usage", "an object or null", usage)
    return Completion(
        text=text_of(message.get("content"), f"{here}.message.content"),
        tool_calls=_tool_calls_of(message, f"{here}.message"),
        finish_reason=finish,
        usage=usage,
        raw=data,
    )
