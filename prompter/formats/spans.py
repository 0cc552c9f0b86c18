"""Where message content lands in a rendered prompt (so special tokens are parsed only in markup).

The technique: render the conversation a second time with every piece of content
between two private-use sentinel characters, check that deleting the sentinels
gives back exactly the normal rendering, and read the offsets off the sentinels.

Templates that strip content keep working because the sentinels go inside the
surrounding whitespace.  Templates that cut content at one of their own literals
(``content.split('</think>')[-1]``) keep working because, where a first attempt
fails, content is also cut at the template's literals and each piece, and each
literal occurrence, gets its own sentinels.  Whatever cannot be traced (content
sliced by index, reordered, partly kept) raises :class:`TemplateError`: no spans
is better than wrong spans, since text outside the spans is trusted as markup.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from prompter.errors import TemplateError

__all__ = ["locate_content"]

_CANDIDATES = (
    ("\ue000", "\ue001", "\ue002", "\ue003"),
    ("\U000f0000", "\U000f0001", "\U000f0002", "\U000f0003"),
    ("\U00100000", "\U00100001", "\U00100002", "\U00100003"),
)
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
_LITERAL = re.compile(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\"""")


class _Marker:
    """Wraps content in sentinels, optionally cutting it at the template's literals first."""

    def __init__(self, marks: tuple[str, str, str, str], literals: re.Pattern[str] | None) -> None:
        self.op, self.cl, self.lop, self.lcl = marks
        self.literals = literals

    def text(self, value: str) -> str:
        if self.literals is None:
            return self._piece(value)
        out = []
        pos = 0
        for match in self.literals.finditer(value):
            out.append(self._piece(value[pos : match.start()]))
            out.append(self.lop + match.group() + self.lcl)
            pos = match.end()
        out.append(self._piece(value[pos:]))
        return "".join(out)

    def _piece(self, value: str) -> str:
        core = value.strip()
        if not core:
            return value
        start = value.index(core)
        return value[:start] + self.op + core + self.cl + value[start + len(core) :]

    def leaves(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._piece(value)
        if isinstance(value, dict):
            return {self.leaves(k): self.leaves(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.leaves(v) for v in value]
        return value

    def message(self, message: dict[str, Any]) -> dict[str, Any]:
        out = dict(message)
        content = out.get("content")
        if isinstance(content, str):
            out["content"] = self.text(content)
        elif isinstance(content, list):
            out["content"] = [
                {**p, "text": self.text(p["text"])} if isinstance(p, dict) and isinstance(p.get("text"), str) else p
                for p in content
            ]
        for key in _REASONING_FIELDS:
            if isinstance(out.get(key), str):
                out[key] = self.text(out[key])
        calls = out.get("tool_calls")
        if isinstance(calls, list):
            out["tool_calls"] = [self._call(call) for call in calls]
        return out

    def _call(self, call: Any) -> Any:
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
            return call
        function = dict(call["function"])
        if isinstance(function.get("name"), str):
            function["name"] = self._piece(function["name"])
        if "arguments" in function:
            function["arguments"] = self.leaves(function["arguments"])
        return {**call, "function": function}


def _mentions(value: Any, chars: tuple[str, ...]) -> bool:
    if isinstance(value, str):
        return any(c in value for c in chars)
    if isinstance(value, dict):
        return any(_mentions(k, chars) or _mentions(v, chars) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_mentions(v, chars) for v in value)
    return False


def _template_literals(source: str) -> list[str]:
    found = []
    for match in _LITERAL.finditer(source):
        text = match.group(1) if match.group(1) is not None else match.group(2)
        text = text.replace("\\n", "\n").replace("\\'", "'").replace('\\"', '"')
        if len(text.strip()) >= 2 and text not in found:
            found.append(text)
    return sorted(found, key=len, reverse=True)


def _read(marked: str, marker: _Marker) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The text without sentinels, and the spans the sentinels mark."""
    op, cl, lop, lcl = marker.op, marker.cl, marker.lop, marker.lcl
    spans: list[tuple[int, int]] = []

    def add(start: int, end: int) -> None:
        if end <= start:
            return
        if spans and spans[-1][1] == start:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))

    clean: list[str] = []
    removed = 0
    last = 0
    start: int | None = None
    literal_at: tuple[int, int] | None = None  # (raw position, clean position) of the last lop
    for match in re.finditer(f"[{op}{cl}{lop}{lcl}]", marked):
        raw = match.start()
        clean.append(marked[last:raw])
        last = raw + 1
        pos = raw - removed
        removed += 1
        ch = match.group()
        if ch == op:
            if start is not None:
                raise TemplateError("content spans: the template reorders message content")
            start = pos
        elif ch == cl:
            if start is None:
                raise TemplateError("content spans: the template keeps only part of a message's content")
            add(start, pos)
            start = None
        elif ch == lop:
            literal_at = (raw, pos)
        elif literal_at is not None and marker.literals is not None:
            between = marked[literal_at[0] + 1 : raw]
            if marker.literals.fullmatch(between):
                add(literal_at[1], pos)
            literal_at = None
    if start is not None:
        raise TemplateError("content spans: the template keeps only part of a message's content")
    clean.append(marked[last:])
    return "".join(clean), tuple(spans)


def locate_content(
    messages: list[dict[str, Any]],
    text: str,
    render: Callable[[list[dict[str, Any]]], str],
    source: str,
) -> tuple[tuple[int, int], ...]:
    """The spans of ``text`` (``render(messages)``) that came from message content.

    Raises :class:`TemplateError` when they cannot be established with certainty.
    """
    marks = next((m for m in _CANDIDATES if not any(c in source for c in m) and not _mentions(messages, m)), None)
    if marks is None:
        raise TemplateError("content spans: the messages use every sentinel character; cannot locate content")
    literals = [lit for lit in _template_literals(source) if _mentions(messages, (lit,))]
    attempts: list[re.Pattern[str] | None] = [None]
    if literals:
        attempts.append(re.compile("|".join(re.escape(lit) for lit in literals)))
    error: TemplateError | None = None
    for pattern in attempts:
        marker = _Marker(marks, pattern)
        try:
            marked = render([marker.message(m) for m in messages])
            clean, spans = _read(marked, marker)
        except TemplateError as exc:
            error = exc
            continue
        if clean == text:
            return spans
        error = TemplateError(
            "content spans: this chat template transforms message content in a way that cannot be traced "
            "back to the output; spans are not available for this conversation"
        )
    assert error is not None  # noqa: S101 - attempts is never empty
    raise error
