"""Tool-call syntax in a local model's answer, read back as OpenAI-style tool calls.

Models write their tool calls in the syntax their chat template taught them
(Qwen/Hermes ``<tool_call>{json}</tool_call>``, Mistral ``[TOOL_CALLS] [...]``,
Granite ``<|tool_call|>``, DeepSeek ``<｜tool▁calls▁begin｜>...<｜tool▁calls▁end｜>``,
Llama 3.1 ``<|python_tag|>{json}``; Llama 3.1 and 3.2 write a call to
one of the caller's tools as a bare JSON object, the whole answer, as their template asks).
:func:`tool_syntax_of` finds which one a model uses; :func:`parse_tool_calls`
splits an answer into its text and :class:`~modules.base.ToolCall` values.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from modules.base import ToolCall

__all__ = ["BARE_JSON_MARKERS", "json_prefix", "parse_tool_calls", "tool_names", "tool_syntax_of"]

# (start, end) markers of the tool-call syntaxes we parse; end None means "a JSON value follows".
_TOOL_SYNTAXES: tuple[tuple[str, str | None], ...] = (
    ("<tool_call>", "</tool_call>"),  # Qwen 2.5/3, Hermes 2 Pro
    ("[TOOL_CALLS]", None),  # Mistral v0.3, Nemo
    ("<|tool_call|>", None),  # Granite 3
    ("<|python_tag|>", None),  # Llama 3.1 (JSON form)
    ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"),  # DeepSeek V2.5, V3, R1
)

# DeepSeek's block holds its calls as its template writes them, each
# ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>``;
# a format that names those per-call markers is read by the whole block.
_DEEPSEEK_CALL = re.compile(
    r"\s*<｜tool▁call▁begin｜>(?P<type>[^<\n]*)<｜tool▁sep｜>(?P<name>[^\n]+)\n```(?:json)?\n(?P<arguments>.*?)\n```"
    r"\s*(?:<｜tool▁call▁end｜>|\Z)",
    re.DOTALL,
)
_BLOCKS = {"<｜tool▁call▁begin｜>": ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")}

BARE_JSON_MARKERS = frozenset({"<|python_tag|>"})
"""Markers of models that also write a tool call as a bare JSON object, the whole answer: Llama 3.1 and
3.2's templates ask for ``{"name": function name, "parameters": ...}`` and write the history's calls
so, keeping ``<|python_tag|>`` for the built-in tools (as vLLM's ``llama3_json`` parser reads them)."""

# The instruction Llama 3.1 and 3.2's templates give with the caller's tools: calls come as bare JSON.
_BARE_JSON_INSTRUCTION = 'Respond in the format {"name": function name, "parameters"'


def parse_tool_calls(
    text: str, start: str = "<tool_call>", end: str | None = "</tool_call>", names: Collection[str] | None = None
) -> tuple[str, list[ToolCall]]:
    """Split a model's answer into its text and OpenAI-style tool calls.

    With an ``end`` marker, each ``start{json}end`` block is one call (Qwen,
    Hermes); the last block may lack its end marker when generation stopped at
    eos. Without one, the JSON value (an object or a list of objects) after
    ``start`` holds the calls (Mistral ``[TOOL_CALLS] [...]``). A call is
    ``{"name": ..., "arguments"|"parameters": {...}}``. Blocks that are not
    valid JSON (nested too deep to read included, or holding ``NaN`` or ``Infinity``, which are no JSON, or a
    number beyond a double such as ``1e999``, which cannot be written back as JSON) are left in the text,
    untouched. With calls, the text loses its trailing whitespace but keeps its leading whitespace, as a
    stream of the same answer must (it has sent that by the time a call shows up).

    For a model that also calls bare (``start`` in :data:`BARE_JSON_MARKERS`: Llama 3.1, 3.2), an answer
    without the marker is calls only when it is nothing but objects (apart from whitespace and ``;``) each
    exactly ``{"name": str, "parameters": {...}}`` (or ``"arguments"``) and, given *names* (the offered
    tools' names), naming one of them; any other JSON (``{"name": "Alice", "age": 30}``) is the answer's text.

    >>> text, calls = parse_tool_calls('Sure.<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>')
    >>> text, calls[0]["function"]
    ('Sure.', {'name': 'f', 'arguments': '{"x": 1}'})
    """
    calls: list[ToolCall] = []
    if start not in text:
        calls = _bare_calls(text, names) if start in BARE_JSON_MARKERS else []
        return ("", calls) if calls else (text, calls)
    if end is None:
        head, _, tail = text.partition(start)
        found = _marked_calls(tail, several=start in BARE_JSON_MARKERS)
        return (head.rstrip(), found) if found else (text, [])
    kept: list[str] = []
    pos = 0
    while True:
        i = text.find(start, pos)
        if i < 0:
            kept.append(text[pos:])
            break
        j = text.find(end, i + len(start))
        body = text[i + len(start) : j if j >= 0 else len(text)]
        found = _block_calls(body)
        if not found:
            kept.append(text[pos : (j + len(end)) if j >= 0 else len(text)])
        else:
            kept.append(text[pos:i])
            calls.extend(found)
        if j < 0:
            break
        pos = j + len(end)
    return "".join(kept).rstrip() if calls else text, calls


def _block_calls(body: str) -> list[ToolCall]:
    """The calls of one block between the markers: a JSON call, or DeepSeek's calls; none if it is neither."""
    if "<｜tool▁sep｜>" not in body:
        call = _as_call(_whole_json(body))  # text after the JSON in the block: no call, the block stays text
        return [call] if call is not None else []
    calls: list[ToolCall] = []
    pos = 0
    while pos < len(body.rstrip()):
        match = _DEEPSEEK_CALL.match(body, pos)
        if match is None or _whole_json(match["arguments"]) is None:  # not this syntax, or not one JSON value
            return []
        name, arguments = match["name"].strip(), match["arguments"].strip()
        call = _as_call({"name": name, "arguments": arguments})
        if call is None or match.end() == pos:
            return []
        calls.append(call)
        pos = match.end()
    return calls


def _marked_calls(tail: str, several: bool) -> list[ToolCall]:
    """The calls in *tail*, what follows a marker that has no end (Mistral, Granite, Llama's tag): one JSON
    value, a call or a list of calls (Llama's tag: several objects, ``;`` apart), and nothing after it but
    whitespace; else none (an empty list, text after the calls): the answer stays text, none of it dropped."""
    rest = tail.strip()
    decoder = json.JSONDecoder()
    calls: list[ToolCall] = []
    while True:
        try:
            value, n = decoder.raw_decode(rest)
        except (ValueError, RecursionError):  # not JSON, or nested too deep to read
            return []
        items = value if isinstance(value, list) else [value]
        found = [c for c in map(_as_call, items) if c is not None]
        if not found or len(found) != len(items):
            return []
        calls.extend(found)
        rest = rest[n:].strip()
        if not rest:
            return calls
        if not (several and rest.startswith(";")):
            return []
        rest = rest[1:].strip()


def _bare_calls(text: str, names: Collection[str] | None) -> list[ToolCall]:
    """The calls *text* consists of (bare call objects apart from whitespace and ``;``), else none.

    As vLLM's ``llama3_json`` parser, an object is a call only with a ``parameters`` (or ``arguments``)
    object beside its ``name``; here also with no other key, and (given *names*) naming an offered tool:
    the answer has no marker, so only the exact shape the template asks for tells a call from JSON data.
    """
    rest = text.strip()
    if not rest.startswith("{"):
        return []
    decoder = json.JSONDecoder()
    calls: list[ToolCall] = []
    while rest:
        try:
            value, n = decoder.raw_decode(rest)
        except (ValueError, RecursionError):  # not JSON, or nested too deep to read: the answer is text
            return []
        call = _as_call(value) if _is_bare_call(value, names) else None
        if call is None:
            return []
        calls.append(call)
        rest = rest[n:].strip()
        if rest.startswith(";"):
            rest = rest[1:].strip()
    return calls


def _is_bare_call(value: Any, names: Collection[str] | None) -> bool:
    """Whether *value* is a call as Llama's template writes one: ``{"name": str, "parameters": {...}}``."""
    if not isinstance(value, Mapping) or len(value) != 2 or not isinstance(value.get("name"), str):
        return False
    key = next(k for k in value if k != "name")  # the one other key
    if key not in ("parameters", "arguments") or not isinstance(value[key], Mapping):
        return False
    return names is None or value["name"] in names


def tool_names(tools: Iterable[Any] | None) -> frozenset[str] | None:
    """The function names of the offered *tools* (OpenAI's ``{"type": "function", "function": {"name": ...}}``,
    or the bare function dict); None without tools."""
    if tools is None:
        return None
    found: set[str] = set()
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        function = tool.get("function")
        name = (function if isinstance(function, Mapping) else tool).get("name")
        if isinstance(name, str):
            found.add(name)
    return frozenset(found)


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


def _whole_json(text: str) -> Any:
    """The one JSON value *text* is (apart from whitespace), or None: not JSON, text after the value, or a
    number JSON cannot write (NaN, Infinity, 1e999)."""

    def finite(number: str) -> float:
        value = float(number)
        if value - value != 0:  # inf or nan
            raise ValueError(f"{number} is no finite number")
        return value

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is no JSON")

    rest = text.strip()
    try:
        value, n = json.JSONDecoder(parse_float=finite, parse_constant=refuse).raw_decode(rest)
    except (ValueError, RecursionError):
        return None
    return value if n == len(rest) else None


def _as_call(value: Any) -> ToolCall | None:
    """*value* as a call, or None: no name, or arguments a strict JSON parser could not read written back
    (``NaN``, ``Infinity``, a number beyond a double such as ``1e999``: OpenAI's arguments are JSON text)."""
    if not isinstance(value, Mapping) or not isinstance(value.get("name"), str):
        return None
    args = value.get("arguments", value.get("parameters", {}))
    try:
        arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, allow_nan=False)
    except (RecursionError, ValueError):  # too deep to write back at the limit's edge, or not finite: not a call
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
        return _BLOCKS.get(start) or (start, getattr(fmt, "tool_call_end", None) or None)
    template = getattr(tokenizer, "chat_template", None) or ""
    if not isinstance(template, str):  # a dict of named templates: the tool-use one teaches the syntax
        template = "\n".join(str(t) for t in dict(template).values())
    for s, e in _TOOL_SYNTAXES:
        if s in vocab or (s in template and (e is None or e in template)):
            return s, e
    if _BARE_JSON_INSTRUCTION in template:  # a Llama 3.2 whose vocabulary lacks the tag: calls come bare
        return "<|python_tag|>", None
    return None
