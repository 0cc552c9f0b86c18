"""Immutable messages, tool calls and content parts, and history normalisation.

Everything a caller passes is validated and copied here, once, at the
boundary; the rest of prompter works on these values and never on the
caller's lists and dicts.

A history item is either a *pair* ``(question, answer)`` (kept as a plain
tuple of two strings, the compact form of a user message followed by an
assistant message) or a :class:`Message`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from prompter.cache_marks import Mark, cache_mark
from prompter.errors import HistoryError, MessageError

__all__ = [
    "ROLES",
    "ContentPart",
    "PartType",
    "Message",
    "Role",
    "ToolCall",
    "Turn",
    "message_from_dict",
    "normalize_history",
    "text_of",
]

Role = Literal["system", "user", "assistant", "tool"]
ROLES: frozenset[str] = frozenset(("system", "user", "assistant", "tool"))


PartType = Literal["text", "image_url", "audio", "video"]


class ContentPart(NamedTuple):
    """One part of a multimodal message: text, or an image, audio or video given by URL, data URL or
    local file path (``/path/cat.png`` or ``file:///path/cat.png``; each renderer sends a local file
    in the form its API takes)."""

    type: PartType
    text: str = ""
    url: str = ""
    detail: str | None = None
    form: str = ""
    """The part's type as the caller's dict named it (``input_audio``, ``audio_url``, AgentScope's
    ``image``...), so that a chat template reads the part as it was given; ``""`` for a part made in
    code (a template reads it in its OpenAI form)."""
    cache_control: Mark = ()
    """The part's prompt-caching mark, checked (see :mod:`prompter.cache_marks`); ``()`` for none."""


class ToolCall(NamedTuple):
    """A function call made by the assistant."""

    id: str
    name: str
    arguments: Mapping[str, Any]
    """The parsed arguments object."""
    arguments_json: str
    """The arguments as JSON text: the caller's own string when one was given."""
    signature: str | None = None
    """The provider's opaque signature of the call, sent back with it: Gemini's ``thoughtSignature``,
    which Gemini 3 requires on every function call of the history. In OpenAI's tool-call shape it is
    ``extra_content.google.thought_signature`` (the convention of Gemini's OpenAI-compatible API)."""


class Message(NamedTuple):
    """One chat message in the neutral shape every renderer reads."""

    role: Role
    content: str | tuple[ContentPart, ...] = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    content_null: bool = False
    """The caller gave ``content: None`` (an assistant message that only calls tools); ``content`` is then
    ``""`` for every renderer, and the OpenAI dialect sends ``null`` back, as the caller wrote it."""
    thinking: tuple[Mapping[str, Any], ...] = ()
    """The assistant's Anthropic thinking blocks (``thinking_blocks`` of the message dict: ``thinking``
    with its ``signature``, or ``redacted_thinking`` with its ``data``), sent back first in its turn, as
    Anthropic requires of a turn that called tools with extended thinking on; other dialects leave them out."""
    cache_control: Mark = ()
    """A prompt-caching mark on the whole message (LiteLLM's form): Anthropic's last block of the turn takes it."""


Turn = tuple[str, str] | Message


def a_part(kind: str) -> str:
    """``"an image_url part"``, ``"a video_url part"``: a content part named in a sentence."""
    return f"{'an' if kind.lstrip(chr(34) + chr(39))[:1].lower() in tuple('aeiou') else 'a'} {kind} part"


def text_of(content: str | tuple[ContentPart, ...], where: str = "content") -> str:
    """The text of ``content``; image parts cannot be expressed as plain text."""
    if isinstance(content, str):
        return content
    for part in content:
        if part.type != "text":
            from prompter.errors import UnsupportedContentError

            raise UnsupportedContentError(
                f"{where}: {a_part(part.type)} cannot be rendered as plain text; "
                "use format='openai' (or another API dialect) for multimodal messages"
            )
    return "\n".join(part.text for part in content)


def _type_name(value: object) -> str:
    return type(value).__name__


def _shown(value: object) -> str:
    """A value in an error message: the repr of a short str, else its type (a repr can raise or be huge)."""
    if type(value) is str and len(value) <= 40:
        return repr(value)
    return f"a {_type_name(value)}"


# Media part shapes accepted besides OpenAI's image_url: OpenAI's input_audio, the */_url forms some
# OpenAI-compatible servers take, and AgentScope's {"type": "image" | "audio" | "video", "url": ...} blocks.
_MEDIA_KEYS = {
    "image_url": ("image_url", "image_url"),
    "audio_url": ("audio", "audio_url"),
    "video_url": ("video", "video_url"),
    "image": ("image_url", "url"),
    "audio": ("audio", "url"),
    "video": ("video", "url"),
}


def _media_part(raw: Mapping[str, Any], kind: str, here: str) -> ContentPart:
    part_type, key = _MEDIA_KEYS[kind]
    value = raw.get(key)
    url = value.get("url") if isinstance(value, Mapping) else value
    if not isinstance(url, str):
        raise MessageError(f"{here}: a {kind} part needs {key}{'.url' if key != 'url' else ''} as a str")
    detail = value.get("detail") if isinstance(value, Mapping) and part_type == "image_url" else None
    if detail is not None and not isinstance(detail, str):
        raise MessageError(f"{here}: image_url.detail must be a str")
    return ContentPart(part_type, url=url, detail=detail, form=kind)  # type: ignore[arg-type]


def _input_audio(raw: Mapping[str, Any], here: str) -> ContentPart:
    audio = raw.get("input_audio")
    data = audio.get("data") if isinstance(audio, Mapping) else None
    fmt = audio.get("format") if isinstance(audio, Mapping) else None
    if not isinstance(data, str) or not isinstance(fmt, str) or not fmt.isalnum():
        raise MessageError(f"{here}: an input_audio part needs input_audio.data (base64) and .format ('wav', 'mp3')")
    return ContentPart("audio", url=f"data:audio/{fmt.lower()};base64,{data}", form="input_audio")


def _content_from(value: object, where: str) -> str | tuple[ContentPart, ...]:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        parts = []
        for i, raw in enumerate(value):
            here = f"{where}[{i}]"
            if isinstance(raw, str):
                parts.append(ContentPart("text", raw))
                continue
            if not isinstance(raw, Mapping):
                raise MessageError(f"{here}: expected a content part dict, got {_type_name(raw)}")
            kind = raw.get("type")
            known = kind if isinstance(kind, str) else None  # compared only as a str: a numpy array's == is no bool
            if known == "text":
                text = raw.get("text")
                if not isinstance(text, str):
                    raise MessageError(f"{here}: a text part needs a str 'text', got {_type_name(text)}")
                parts.append(ContentPart("text", text))
            elif known == "input_audio":
                parts.append(_input_audio(raw, here))
            elif known in _MEDIA_KEYS:
                parts.append(_media_part(raw, known, here))
            else:
                raise MessageError(
                    f"{here}: unsupported content part type {_shown(kind)}; use 'text', 'image_url', "
                    "'input_audio', 'audio_url' or 'video_url'"
                )
            if "cache_control" in raw:
                parts[-1] = parts[-1]._replace(cache_control=cache_mark(raw["cache_control"], f"{here}.cache_control"))
        return tuple(parts)
    if isinstance(value, (Mapping, int, float)):  # bool is an int
        # AgentScope sends structured content as its JSON text; so do we (and never guess at a repr)
        try:
            return json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise MessageError(f"{where}: content is not JSON-serialisable ({exc})") from None
    raise MessageError(f"{where}: expected str, a list of content parts or a JSON value, got {_type_name(value)}")


ARGUMENTS_DEPTH = 100
"""How deep tool-call arguments given as JSON text may nest (what prompters accept for any value they copy)."""


def _too_deep(value: object, limit: int) -> bool:
    """Whether ``value`` (parsed JSON) nests deeper than ``limit`` containers; iterative, so any depth is safe."""
    level: list[dict[Any, Any] | list[Any]] = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[dict[Any, Any] | list[Any]] = []
        for container in level:
            items = container.values() if isinstance(container, dict) else container
            below += [item for item in items if isinstance(item, (dict, list))]
        level = below
    return False


def _tool_call_from(raw: object, where: str) -> ToolCall:
    if not isinstance(raw, Mapping):
        raise MessageError(f"{where}: expected a tool call dict, got {_type_name(raw)}")
    function = raw.get("function", raw)
    if not isinstance(function, Mapping):
        raise MessageError(f"{where}.function: expected a dict, got {_type_name(function)}")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise MessageError(f"{where}: a tool call needs a non-empty str function name")
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):
        text = arguments
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise MessageError(f"{where}: arguments are not valid JSON ({exc.msg} at {exc.pos})") from None
        except (ValueError, RecursionError):  # valid JSON Python cannot read: a 4,301-digit number, deep nesting
            raise MessageError(
                f"{where}: arguments hold a number over 4,300 digits or nest too deep for Python to read; "
                "send long numbers as strings and flatten the nesting"
            ) from None
        if not isinstance(parsed, dict):
            raise MessageError(f"{where}: arguments must be a JSON object, got {_type_name(parsed)}")
        if _too_deep(parsed, ARGUMENTS_DEPTH):  # every dialect copies them, recursively
            raise MessageError(f"{where}: arguments nest more than {ARGUMENTS_DEPTH} levels deep; flatten them")
        arguments = parsed
    elif isinstance(arguments, Mapping):
        try:
            text = json.dumps(arguments, ensure_ascii=False)
            arguments = json.loads(text)  # a deep copy the caller cannot reach
        except (TypeError, ValueError, RecursionError) as exc:
            raise MessageError(f"{where}: arguments are not JSON-serialisable ({exc})") from None
    else:
        raise MessageError(f"{where}: arguments must be a dict or a JSON string, got {_type_name(arguments)}")
    call_id = raw.get("id")
    if call_id is None:
        call_id = ""
    if not isinstance(call_id, str):
        raise MessageError(f"{where}.id: expected str, got {_type_name(call_id)}")
    return ToolCall(call_id, name, arguments, text, _signature(raw.get("extra_content"), where))


def _signature(extra: object, where: str) -> str | None:
    """``extra_content.google.thought_signature`` of a tool-call dict (None when absent)."""
    if extra is None:
        return None
    google = extra.get("google") if isinstance(extra, Mapping) else None
    signature = google.get("thought_signature") if isinstance(google, Mapping) else None
    if signature is None:
        return None
    if not isinstance(signature, str):
        raise MessageError(f"{where}.extra_content.google.thought_signature: expected str, got {_type_name(signature)}")
    return signature


def message_from_dict(raw: Mapping[str, Any], where: str = "message") -> Message:
    """Validate an OpenAI-style message dict and return it as a :class:`Message`.

    A dict with a speaker ``name`` and no ``role`` is an assistant turn (AgentScope's convention);
    ``as_agent=`` decides whose turns are the assistant's.

    ``content: None`` is accepted for an assistant message that carries tool
    calls; tool-call ``arguments`` given as a JSON string are parsed.
    """
    role = raw.get("role")
    if role is None and isinstance(raw.get("name"), str):
        role = "assistant"  # an agent's turn given by its name alone, as AgentScope's memory dicts are
    if not isinstance(role, str) or role not in ROLES:
        if role is None:
            raise MessageError(
                f"{where}: a message needs a 'role' (one of system, user, assistant, tool) or a speaker 'name'"
            )
        raise MessageError(f"{where}: unknown role {_shown(role)}; expected one of system, user, assistant, tool")
    raw_calls = raw.get("tool_calls")
    if raw_calls is None:  # never the value's own truth test: a numpy array's raises
        raw_calls = ()
    if not isinstance(raw_calls, (list, tuple)):
        raise MessageError(f"{where}.tool_calls: expected a list, got {_type_name(raw_calls)}")
    if raw_calls and role != "assistant":
        raise MessageError(f"{where}: only assistant messages carry tool_calls, not {role}")
    calls = tuple(_tool_call_from(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(raw_calls))
    value = raw.get("content")
    if value is None:
        if not (role == "assistant" and calls):
            raise MessageError(f"{where}: content is missing; only an assistant message with tool_calls may omit it")
        content: str | tuple[ContentPart, ...] = ""
        null = True
    else:
        null = False
        content = _content_from(value, f"{where}.content")
    tool_call_id = raw.get("tool_call_id")
    if tool_call_id is not None and not isinstance(tool_call_id, str):
        raise MessageError(f"{where}.tool_call_id: expected str, got {_type_name(tool_call_id)}")
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        raise MessageError(f"{where}.name: expected str, got {_type_name(name)}")
    thinking = () if "thinking_blocks" not in raw else _thinking_from(raw["thinking_blocks"], role, where)
    mark = cache_mark(raw["cache_control"], f"{where}.cache_control") if "cache_control" in raw else ()
    return Message(role, content, calls, tool_call_id, name, null, thinking, mark)  # type: ignore[arg-type]


_THINKING_FIELDS = {"thinking": ("thinking", "signature"), "redacted_thinking": ("data",)}


def _thinking_from(raw: object, role: str, message: str) -> tuple[Mapping[str, Any], ...]:
    """Anthropic thinking blocks, checked and copied (each field a str, as the API gives them)."""
    where = f"{message}.thinking_blocks"
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)):
        raise MessageError(f"{where}: expected a list of thinking blocks, got {_type_name(raw)}")
    if raw and role != "assistant":
        raise MessageError(f"{where}: only assistant messages carry thinking blocks, not {role}")
    blocks = []
    for i, block in enumerate(raw):
        kind = block.get("type") if isinstance(block, Mapping) else None
        fields = _THINKING_FIELDS.get(kind) if isinstance(kind, str) else None
        if fields is None:
            raise MessageError(
                f"{where}[{i}]: expected a block of type 'thinking' or 'redacted_thinking', got {_shown(block)}"
            )
        assert isinstance(block, Mapping)  # noqa: S101 - checked above
        for field in fields:
            if field in block and not isinstance(block[field], str):
                raise MessageError(f"{where}[{i}].{field}: expected str, got {_type_name(block[field])}")
        blocks.append({"type": kind, **{field: block[field] for field in fields if field in block}})
    return tuple(blocks)


def normalize_history(history: object, where: str = "history") -> tuple[Turn, ...]:
    """Validate ``history`` and return it as an immutable tuple of turns.

    >>> normalize_history([["hi", "hello"], {"role": "user", "content": "bye"}])[0]
    ('hi', 'hello')
    """
    if history is None:
        return ()
    if not isinstance(history, (list, tuple)):
        raise HistoryError(
            f"{where}: expected a list of [question, answer] pairs or message dicts, got {_type_name(history)}"
        )
    pairs: list[Turn] = []
    for item in history:  # the common case first, checked cheaply: only [question, answer] lists
        if type(item) is list and len(item) == 2:
            question, answer = item
            if type(question) is str and type(answer) is str:
                pairs.append((question, answer))
                continue
        break
    else:
        return tuple(pairs)
    turns: list[Turn] = []
    for i, item in enumerate(history):
        if type(item) is list and len(item) == 2 and type(item[0]) is str and type(item[1]) is str:
            turns.append((item[0], item[1]))  # the common case, checked cheaply first
        elif isinstance(item, Mapping):
            turns.append(message_from_dict(item, f"{where}[{i}]"))
        elif isinstance(item, (list, tuple)) and not isinstance(item, Message) and len(item) == 2:
            question, answer = item
            if type(question) is not str or type(answer) is not str:
                bad = question if type(question) is not str else answer
                raise HistoryError(
                    f"{where}[{i}]: a [question, answer] pair holds two str, got {_type_name(bad)}"
                )
            turns.append((question, answer))
        elif isinstance(item, Message):
            turns.append(item)
        else:
            shape = f"a {len(item)}-item {_type_name(item)}" if isinstance(item, (list, tuple)) else _type_name(item)
            raise HistoryError(f"{where}[{i}]: expected [question, answer] or a message dict, got {shape}")
    return tuple(turns)


def messages_from(value: object, where: str) -> tuple[Message, ...]:
    """A message dict or a list of message dicts (the current turn) as messages."""
    if isinstance(value, Mapping):
        return (message_from_dict(value, where),)
    items: Sequence[Any] = value  # type: ignore[assignment]
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise MessageError(f"{where}[{i}]: expected a message dict, got {_type_name(item)}")
    return tuple(message_from_dict(m, f"{where}[{i}]") for i, m in enumerate(items))
