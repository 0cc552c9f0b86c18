"""Tool-call syntax in a local model's answer, read back as OpenAI-style tool calls.

Models write their tool calls in the syntax their chat template taught them
(Qwen/Hermes ``<tool_call>{json}</tool_call>``, Mistral ``[TOOL_CALLS] [...]``,
Granite ``<|tool_call|>``, Llama 3.1 ``<|python_tag|>{json}``).
:func:`tool_syntax_of` finds which one a model uses; :func:`parse_tool_calls`
splits an answer into its text and :class:`~modules.base.ToolCall` values.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from modules.base import ToolCall

__all__ = ["json_prefix", "parse_tool_calls", "tool_syntax_of"]

# (start, end) markers of the tool-call syntaxes we parse; end None means "a JSON value follows".
_TOOL_SYNTAXES: tuple[tuple[str, str | None], ...] = (
    ("<tool_call>", "</tool_call>"),  # Qwen 2.5/3, Hermes 2 Pro
    ("[TOOL_CALLS]", None),  # Mistral v0.3, Nemo
    ("<|tool_call|>", None),  # Granite 3
    ("<|python_tag|>", None),  # Llama 3.1 (JSON form)
)


def parse_tool_calls(
    text: str, start: str = "<tool_call>", end: str | None = "</tool_call>"
) -> tuple[str, list[ToolCall]]:
    """Split a model's answer into its text and OpenAI-style tool calls.

    With an ``end`` marker, each ``start{json}end`` block is one call (Qwen,
    Hermes); the last block may lack its end marker when generation stopped at
    eos. Without one, the JSON value (an object or a list of objects) after
    ``start`` holds the calls (Mistral ``[TOOL_CALLS] [...]``). A call is
    ``{"name": ..., "arguments"|"parameters": {...}}``. Blocks that are not
    valid JSON (nested too deep to read included) are left in the text, untouched. With calls, the text loses its
    trailing whitespace but keeps its leading whitespace, as a stream of the same
    answer must (it has sent that by the time a call shows up).

    >>> text, calls = parse_tool_calls('Sure.<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>')
    >>> text, calls[0]["function"]
    ('Sure.', {'name': 'f', 'arguments': '{"x": 1}'})
    """
    calls: list[ToolCall] = []
    if start not in text:
        return text, calls
    if end is None:
        head, _, tail = text.partition(start)
        parsed = json_prefix(tail.strip())
        items = parsed if isinstance(parsed, list) else [parsed]
        found = [c for c in (_as_call(i) for i in items) if c is not None]
        if parsed is None or len(found) != len(items):
            return text, []
        return head.rstrip(), found
    kept: list[str] = []
    pos = 0
    while True:
        i = text.find(start, pos)
        if i < 0:
            kept.append(text[pos:])
            break
        j = text.find(end, i + len(start))
        body = text[i + len(start) : j if j >= 0 else len(text)]
        call = _as_call(json_prefix(body.strip()))
        if call is None:
            kept.append(text[pos : (j + len(end)) if j >= 0 else len(text)])
        else:
            kept.append(text[pos:i])
            calls.append(call)
        if j < 0:
            break
        pos = j + len(end)
    return "".join(kept).rstrip() if calls else text, calls


def json_prefix(text: str) -> Any:
    """The JSON value *text* starts with (trailing text ignored), or None if it starts with none.

    A value nested too deep for Python's recursion limit is none either: a model
    (or a prompt injection) writing ``[[[[...`` must not turn an answer into a
    bare RecursionError.
    """
    try:
        value, _ = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return None
    return value


def _as_call(value: Any) -> ToolCall | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("name"), str):
        return None
    args = value.get("arguments", value.get("parameters", {}))
    try:
        arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    except RecursionError:  # read at the limit's edge, too deep to write back: not a call
        return None
    return ToolCall(
        id="call_" + uuid.uuid4().hex[:24],
        type="function",
        function={"name": value["name"], "arguments": arguments},
    )


def tool_syntax_of(fmt: Any, tokenizer: Any, vocab: Mapping[str, int]) -> tuple[str, str | None] | None:
    """The ``(start, end)`` tool-call markers of a model: its format's, else a known one its tokenizer uses."""
    start = getattr(fmt, "tool_call_start", None)
    if start:
        return start, getattr(fmt, "tool_call_end", None) or None
    template = getattr(tokenizer, "chat_template", None) or ""
    for s, e in _TOOL_SYNTAXES:
        if s in vocab or (s in template and (e is None or e in template)):
            return s, e
    return None
