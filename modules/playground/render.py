"""One playground rendering: the exact output of ``generate_prompt``, cut into marked segments.

The output is what ``generate_prompt`` returns for the state (:mod:`modules.playground.state`):
the string itself, or an API body as ``json.dumps(body, indent=2, ensure_ascii=False)`` (what
``prompter render`` prints). The segments only mark it up; joined, they are the output exactly:

* ``user``: text the caller typed (input values, history, every string of the tools), traced
  by the prompter's own sentinel marking (:func:`~prompter.formats.spans.locate_user_text`):
  rendered once more with every such string between sentinels, offsets read off them; where
  that cannot be established (a template that slices text by index) nothing is marked, never
  a wrong span;
* ``special``: a special token of the model format where the model reads it as one: outside
  user text and outside the content spans a ``TrainableModule`` tokenizes as text (so a token
  typed into the instruction, which becomes message content, is not one);
* ``template``: everything else.

>>> from modules.playground.state import read_state
>>> result = render(read_state({"instruction": "Be brief.", "input": "hi", "model_format": "qwen2.5"}))
>>> [s["text"] for s in result["segments"] if s["kind"] == "user"]
['hi']
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from modules.playground.state import MAX_OUTPUT_CHARS, Call, FieldError
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
from prompter.formats.spans import is_name, locate_user_text

Spans = tuple[tuple[int, int], ...]
TokenCounter = Callable[[str, Spans], int]
"""Counts the tokens of a rendering, given the spans the model reads as text (its content spans and the user's
text; only the user's text where no format is bound): a token typed there counts as the text it is, as a
``TrainableModule`` sends it."""

__all__ = ["TokenCounter", "error_body", "is_panic", "render"]

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


def render(call: Call, count_tokens: TokenCounter | None = None) -> dict[str, Any]:
    """The page's answer for one state: output, segments and counts (raises the prompter's typed errors)."""
    output = _as_text(call.run())
    if len(output) > MAX_OUTPUT_CHARS:  # refused before it is traced, marked and counted, which cost more
        raise FieldError(
            "input",
            f"the rendering is {len(output)} characters, over the playground's limit of {MAX_OUTPUT_CHARS}; "
            "shorten the input, history or tools",
            kind="RenderTooLarge",
        )
    spans = _user_spans(call, output)
    content = _content_spans(call, output)
    special = _special_tokens(call) if call.format is None else ()
    segments = _segments(output, spans, content, special)
    tokens = None
    if count_tokens is not None and call.format is None:
        # read as text: the content spans and the user's own text (all that is known without a bound format)
        text = tuple(_merged([*(spans or ()), *(content or ())]))
        try:
            tokens = int(count_tokens(output, text))
        except Exception:  # a count is a nicety; the rendering stands without it
            tokens = None
        except BaseException as exc:  # a tokenizer's Rust panic (out of memory, say) is no Exception
            if not is_panic(exc):
                raise
            tokens = None
    return {
        "output": output,
        "kind": "text" if call.format is None else "json",
        "segments": segments,
        "marked": spans is not None,
        "chars": len(output),
        "tokens": tokens,
    }


def is_panic(exc: BaseException) -> bool:
    """Whether ``exc`` is a Rust panic come through pyo3 (``pyo3_runtime.PanicException``, what a
    ``tokenizers`` tokenizer raises when its Rust code panics): a BaseException, not an Exception."""
    return any(cls.__module__ == "pyo3_runtime" and cls.__name__ == "PanicException" for cls in type(exc).__mro__)


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


def _user_spans(call: Call, output: str) -> Spans | None:
    """Where the caller's text lies in ``output``, or None when that cannot be established with certainty.

    Every string the caller gave is traced (:func:`_places`) by the prompter's own sentinel marking
    (:func:`~prompter.formats.spans.locate_user_text`, which also pre-cuts text at the template's
    literals, as ``content.split('</think>')`` needs): each is handed over as a one-entry dict, so
    that all are marked, and put back in its place for a second rendering of the same call."""
    roots = (call.input, call.history, call.tools)
    places = list(_places(roots))
    if not places:
        return ()
    flat = [{"arguments" if path[-1] == "arguments" else "text": text} for path, _, text in places]

    def again(marked: list[Any], _tools: Any) -> str:
        new = {(path, is_key): next(iter(item.values())) for (path, is_key, _), item in zip(places, marked)}
        values = _rebuild(roots, (), new)
        return _as_text(replace(call, input=values[0], history=values[1], tools=values[2]).run())

    try:
        return locate_user_text(flat, None, output, again, _source(call), inert=lambda _: False)
    except (TemplateError, RecursionError):
        return None


Path = tuple[Any, ...]
# values that templates compare with their own literals (`role == 'user'`, `type == 'function'`, ids
# measured by length) stay as typed in history and tools, when they are names that cannot spell a token
_COMPARED = frozenset({"role", "type", "id", "tool_call_id"})


def _places(value: Any, path: Path = ()) -> Iterator[tuple[Path, bool, str]]:
    """``(path, is_key, text)`` of every string of the caller's to trace: every string value at any
    depth and the property names of the tools' schemas; not the input's slot names (the prompter
    looks them up) nor the compared names above."""
    if isinstance(value, str):
        yield path, False, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if len(path) > 1 and path[0] == 2 and path[-1] == "properties" and isinstance(key, str):
                yield (*path, key), True, key
            if path and path[0] != 0 and key in _COMPARED and isinstance(item, str) and is_name(item):
                continue
            yield from _places(item, (*path, key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _places(item, (*path, index))


def _rebuild(value: Any, path: Path, new: dict[tuple[Path, bool], Any]) -> Any:
    """A copy of ``value`` with the strings at the paths of ``new`` (keys and values) replaced."""
    if isinstance(value, str):
        return new.get((path, False), value)
    if isinstance(value, dict):
        return {new.get(((*path, k), True), k): _rebuild(v, (*path, k), new) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rebuild(item, (*path, index), new) for index, item in enumerate(value)]
    return value


def _source(call: Call) -> str:
    """The family's chat template (whose literals a template may cut user text at), or ""."""
    try:
        fmt = ModelFormat.get(call.model_format) if call.model_format else None
    except PromptError:
        return ""
    if fmt is None:
        return ""
    use_tools = call.tools is not None and fmt.tool_chat_template is not None
    return (fmt.tool_chat_template if use_tools else fmt.chat_template) or ""


def _content_spans(call: Call, output: str) -> Spans | None:
    """The spans a local model reads as text, not markup: the bound format's content spans of the
    request a ``TrainableModule`` builds (``format="openai"``, then ``render_with_spans``), which
    take every message's content, the instruction included. A token there is no control token."""
    if call.format is not None or not call.model_format:
        return None
    try:
        body = replace(call, format="openai").run()
        rendered = ModelFormat.get(call.model_format).render_with_spans(body["messages"], body.get("tools"))
    except (PromptError, RecursionError, KeyError, TypeError):
        return None
    return rendered.spans if rendered.text == output else None


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


def _segments(
    output: str, spans: Spans | None, content: Spans | None, tokens: tuple[str, ...]
) -> list[dict[str, str]]:
    """``output`` cut into user text, special tokens (outside user text and content spans) and template."""
    user = list(spans or ())
    text = _merged([*user, *(content or ())])  # read as text by the model: a token there is not one
    ends = [end for _, end in text]
    found: list[tuple[int, int]] = []
    if tokens:  # the longest first where two start at one place
        for match in re.finditer("|".join(map(re.escape, tokens)), output):
            i = bisect_right(ends, match.start())  # the first text span ending after the token starts
            if i == len(text) or text[i][0] >= match.end():
                found.append(match.span())
    cuts = sorted([(s, e, "user") for s, e in user] + [(s, e, "special") for s, e in found])
    segments: list[dict[str, str]] = []
    last = 0
    for start, end, kind in cuts:
        if start > last:
            segments.append({"kind": "template", "text": output[last:start]})
        segments.append({"kind": kind, "text": output[start:end]})
        last = end
    if last < len(output):
        segments.append({"kind": "template", "text": output[last:]})
    return segments


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, with overlapping or touching ones joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out
