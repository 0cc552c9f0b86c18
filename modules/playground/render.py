"""One playground rendering: the exact output of ``generate_prompt``, cut into marked segments.

The output is what ``generate_prompt`` returns for the state (:mod:`modules.playground.state`):
the string itself, or an API body as ``json.dumps(body, indent=2, ensure_ascii=False)`` (what
``prompter render`` prints). The segments only mark it up; joined, they are the output exactly:

* ``user``: text the caller typed (input values, history, tool descriptions and arguments),
  found by rendering once more with every such string between two private-use sentinels and
  reading their offsets; where the sentinels do not come back verbatim (a template that
  transforms text, user text holding the sentinels) nothing is marked, never a wrong span;
* ``special``: a special token of the model format, outside user text;
* ``template``: everything else.

>>> from modules.playground.state import read_state
>>> result = render(read_state({"instruction": "Be brief.", "input": "hi", "model_format": "qwen2.5"}))
>>> [s["text"] for s in result["segments"] if s["kind"] == "user"]
['hi']
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from modules.playground.state import Call, FieldError
from prompter import ModelFormat
from prompter.errors import (
    HistoryError,
    InputTypeError,
    MessageError,
    MissingSlotError,
    PromptError,
    TemplateError,
    ToolsError,
    UnexpectedKeyError,
    UnknownModelFormatError,
    UnsupportedContentError,
)

__all__ = ["error_body", "render"]

_OPEN, _CLOSE = "\ue000", "\ue001"
# the keys of message and tool dicts whose string values are the caller's words (roles, types
# and names are compared by templates with their own literals, so they stay as typed)
_TEXT_KEYS = frozenset({"content", "text", "description", "arguments", "reasoning_content", "thinking"})
_NAMES = frozenset({"role", "type", "name", "id", "tool_call_id"})
_FIELD_OF: tuple[tuple[type[Exception], str], ...] = (
    (HistoryError, "history"),
    (ToolsError, "tools"),
    (UnknownModelFormatError, "model_format"),
    (MissingSlotError, "input"),
    (UnexpectedKeyError, "input"),
    (InputTypeError, "input"),
    (UnsupportedContentError, "format"),
    (TemplateError, "model_format"),
)


def render(call: Call, count_tokens: Callable[[str], int] | None = None) -> dict[str, Any]:
    """The page's answer for one state: output, segments and counts (raises the prompter's typed errors)."""
    output = _as_text(call.run())
    spans = _user_spans(call, output)
    segments = _segments(output, spans, _special_tokens(call) if call.format is None else ())
    tokens = None
    if count_tokens is not None and call.format is None:
        try:
            tokens = int(count_tokens(output))
        except Exception:  # a count is a nicety; the rendering stands without it
            tokens = None
    return {
        "output": output,
        "kind": "text" if call.format is None else "json",
        "segments": segments,
        "marked": spans is not None,
        "chars": len(output),
        "tokens": tokens,
    }


def error_body(exc: BaseException) -> dict[str, Any]:
    """``{"error": {"type", "field", "message"}}`` for a mistake in the state, in words."""
    if isinstance(exc, FieldError):
        kind, field = exc.kind, exc.field
    else:
        kind, field = type(exc).__name__, _field_of(exc)
    message = str(exc)  # as the prompter says it, so the page shows the very words generate_prompt raises
    if len(message) > 2000:
        message = message[:2000] + " ..."
    return {"error": {"type": kind, "field": field, "message": message}}


def _field_of(exc: BaseException) -> str:
    text = str(exc)
    for name in ("history", "tools", "input", "model_format", "format", "extra_keys", "instruction"):
        if text.startswith(name):
            return name
    if isinstance(exc, MessageError):
        return "history"
    for cls, name in _FIELD_OF:
        if isinstance(exc, cls):
            return name
    return "instruction"


def _as_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, indent=2, ensure_ascii=False)


def _user_spans(call: Call, output: str) -> list[tuple[int, int]] | None:
    """Where the caller's text lies in ``output``, or None when that cannot be established with certainty."""
    if _OPEN in output or _CLOSE in output:
        return None
    marked = replace(call, input=_mark(call.input, True), history=_mark(call.history, True), tools=_mark(call.tools))
    try:
        traced = _as_text(marked.run())
    except (PromptError, RecursionError, ValueError, TypeError):
        return None
    spans: list[tuple[int, int]] = []
    plain: list[str] = []
    length, start = 0, None
    for piece in _split_sentinels(traced):
        if piece == _OPEN:
            if start is not None:
                return None
            start = length
        elif piece == _CLOSE:
            if start is None:
                return None
            if length > start:
                spans.append((start, length))
            start = None
        else:
            plain.append(piece)
            length += len(piece)
    if start is not None or "".join(plain) != output:
        return None
    return spans


def _split_sentinels(text: str) -> list[str]:
    pieces, last = [], 0
    for i, ch in enumerate(text):
        if ch in (_OPEN, _CLOSE):
            pieces += [text[last:i], ch]
            last = i + 1
    pieces.append(text[last:])
    return pieces


def _mark(value: Any, every_string: bool = False) -> Any:
    """A copy of ``value`` with the caller's words between sentinels (inside surrounding whitespace, so a
    template's ``trim`` still sees the same text). ``every_string``: a dict's string values are all words
    (slot values, history pairs) except role-like names a template compares with its own literals."""
    if isinstance(value, str):
        core = value.strip()
        if not core:
            return value
        head = value[: len(value) - len(value.lstrip())]
        tail = value[len(value.rstrip()) :]
        return f"{head}{_OPEN}{core}{_CLOSE}{tail}"
    if isinstance(value, list):
        return [_mark(item, every_string) for item in value]
    if isinstance(value, dict):
        return {k: _mark_entry(k, v, every_string) for k, v in value.items()}
    return value


def _mark_entry(key: Any, value: Any, every_string: bool) -> Any:
    if isinstance(value, str):
        words = key in _TEXT_KEYS or (every_string and key not in _NAMES)
        return _mark(value) if words else value
    return _mark(value)


def _special_tokens(call: Call) -> tuple[str, ...]:
    try:
        fmt = ModelFormat.get(call.model_format) if call.model_format else ModelFormat.generic()
    except PromptError:
        return ()
    found = [t for t in (*fmt.special_tokens, fmt.bos_token, fmt.eos_token) if t and t.strip()]
    if not found:  # the generic layout has no tokenizer's tokens: its delimiters stand in for them
        fields = (fmt.sos, fmt.eos, fmt.soh, fmt.eoh, fmt.soa, fmt.eoa, fmt.soe, fmt.eoe, fmt.bos)
        found = [t.strip() for t in fields if t.strip()]
    return tuple(sorted(dict.fromkeys(found), key=len, reverse=True))


def _segments(output: str, spans: list[tuple[int, int]] | None, tokens: tuple[str, ...]) -> list[dict[str, str]]:
    segments: list[dict[str, str]] = []
    last = 0
    for start, end in spans or ():
        segments += _markup(output[last:start], tokens)
        segments.append({"kind": "user", "text": output[start:end]})
        last = end
    segments += _markup(output[last:], tokens)
    return segments


def _markup(text: str, tokens: tuple[str, ...]) -> list[dict[str, str]]:
    """Template text cut at the special tokens (the longest first where two start at one place)."""
    if not text:
        return []
    if not tokens:
        return [{"kind": "template", "text": text}]
    out: list[dict[str, str]] = []
    last = 0
    for match in re.finditer("|".join(map(re.escape, tokens)), text):
        if match.start() > last:
            out.append({"kind": "template", "text": text[last : match.start()]})
        out.append({"kind": "special", "text": match.group()})
        last = match.end()
    if last < len(text):
        out.append({"kind": "template", "text": text[last:]})
    return out
