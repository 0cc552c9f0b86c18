"""Where user text lands in a rendered prompt (so special tokens are parsed only in markup).

"User text" is defined once, by :func:`user_strings`: every string value and
every dict key, at any depth, of the messages and tools a caller supplies.

The technique: render the request a second time with every user string between
sentinels, check that deleting the sentinels gives back exactly the normal
rendering, and read the offsets off the sentinels.  Only inert names a template
must compare as they are (dict keys such as ``content``, ``type`` values, ids,
standard roles) stay unmarked, and only when they cannot spell a control token.

Templates that strip text keep working because the sentinels go inside the
surrounding whitespace; templates that change case keep them (digits and
uncased characters only); templates that print a ``repr`` or ASCII JSON get
ASCII sentinels; templates that cut text at one of their own literals
(``content.split('</think>')[-1]``) get it pre-cut at those literals, each
piece and each literal occurrence with its own sentinels.  Whatever cannot be
traced (text sliced by index, reordered, partly kept) raises
:class:`TemplateError`: no spans is better than wrong spans, since text outside
the spans is trusted as markup. For the same reason the markup outside the
spans must stay the same when the user's characters change: a template that
takes user text apart character by character drops the sentinels with the
characters it drops, and would otherwise pass with the kept ones outside every
span.

Why this file is long: it is one technique (marking every user string, reading
the sentinels back, checking the markup does not depend on user text) whose
three steps share the private marker and reader; split, each part would reach
into the others.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from prompter.errors import TemplateError
from prompter.formats.plain_data import stored_items
from prompter.formats.registry import shipped_sources

__all__ = [
    "MAX_DEPTH",
    "RAW_ROLES",
    "Inert",
    "is_name",
    "locate_content",
    "locate_user_text",
    "nesting_depth",
    "user_strings",
]

_LITERAL = re.compile(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\"""")


@lru_cache(maxsize=64)
def _template_literals(source: str) -> tuple[str, ...]:
    """The template's string literals of two or more characters, longest first (per source, once)."""
    found: list[str] = []
    for match in _LITERAL.finditer(source):
        text = match.group(1) if match.group(1) is not None else match.group(2)
        text = text.replace("\\n", "\n").replace("\\'", "'").replace('\\"', '"')
        if len(text.strip()) >= 2 and text not in found:
            found.append(text)
    return tuple(sorted(found, key=len, reverse=True))


def locate_content(
    messages: list[dict[str, Any]],
    text: str,
    render: Callable[[list[dict[str, Any]], Any, Any], str],
    source: str,
    tools: list[Any] | None = None,
    documents: list[Any] | None = None,
) -> tuple[tuple[int, int], ...]:
    """The spans of ``text`` (``render(messages, tools, documents)``) that came from user text.

    Every string and key of the messages, and of the tools and documents the
    template reads as variables, is traced (:func:`locate_user_text`), not only
    the contents. Raises :class:`TemplateError` when the spans cannot be
    established with certainty.
    """

    def both(msgs: list[Any], extra: list[Any] | None) -> str:
        marked_tools, marked_documents = extra or (None, None)
        return render(msgs, marked_tools, marked_documents)

    try:
        return locate_user_text(messages, [tools, documents], text, both, source)
    except TemplateError as exc:
        raise TemplateError(f"content spans: {exc}") from None


# -- whole requests: every string and every key a caller supplies ----------------------------------

RAW_ROLES = frozenset({"system", "user", "assistant", "tool", "developer", "function", "ipython", "observation"})
"""Role values left as they are: templates compare them with their own literals (``role == 'user'``)."""

_NAME = re.compile(r"^[A-Za-z0-9_.:$\-]{1,128}$")
# Values templates compare or measure rather than print as prose (`type == 'function'`, Mistral's
# 9-character ids); they stay unmarked when inert, and are marked like any other text otherwise.
_COMPARED_VALUES = frozenset({"type", "id", "tool_call_id"})


def is_name(value: str) -> bool:
    """Letters, digits and ``_ . : $ -`` only: text that cannot spell ``<|x|>``, ``[INST]`` or ``<s>``."""
    return bool(_NAME.match(value))


def user_strings(value: Any) -> Iterator[str]:
    """Every string value and every dict key, at any depth, of *value*: the one definition of user text.

    Everything a caller supplies (messages with every field, tool calls, ids,
    arguments, tool definitions, metadata, documents) is walked by this one
    function; :func:`locate_user_text` marks exactly what it yields, except the
    inert names a template must compare.

    >>> sorted(user_strings({"role": "user", "metadata": {"$defs": ["a"]}}))
    ['$defs', 'a', 'metadata', 'role', 'user']
    """
    if isinstance(value, str):
        # a str subclass as its exact text: its own __eq__ or __hash__ (even a raising one) never runs here
        yield value if type(value) is str else str.__str__(value)
    elif isinstance(value, Mapping):
        for key, item in stored_items(value):
            if isinstance(key, str):
                yield key if type(key) is str else str.__str__(key)
            yield from user_strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from user_strings(item)


class _RequestMarker:
    """Marks every user string of a request with sentinels, leaving only inert names bare."""

    def __init__(
        self,
        marks: tuple[str, str, str, str],
        literals: re.Pattern[str] | None,
        inert: Inert,
        swap: Mapping[str, str] | None = None,
    ) -> None:
        self.op, self.cl, self.lop, self.lcl = marks
        self.literals = literals
        self.inert = inert
        self.names: set[str] = set()
        self.swap = swap  # each visible character of marked text replaced (one to one), for the dependency check

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
        # Sentinels go inside surrounding whitespace, so templates that strip content still keep them.
        core = value.strip()
        if not core:
            return value
        start = value.index(core)
        if self.swap is not None:
            core = "".join(self.swap.get(c, c) for c in core)
        return value[:start] + self.op + core + self.cl + value[start + len(core) :]

    def bare(self, value: str, key: Any) -> bool:
        """Whether *value* (found under *key*, None for a dict key itself) is left unmarked."""
        if key == "role" and value in RAW_ROLES:
            return True
        return (key is None or key in _COMPARED_VALUES or value in self.names) and self.inert(value)

    def json_text(self, value: str) -> str:
        """Tool-call arguments kept as JSON text (for templates that print them as given): only the
        string literals inside are marked, so the text stays valid JSON and outside them no
        character can spell a control token."""
        return _JSON_STRING.sub(lambda m: '"' + self.text(m.group(1)) + '"', value)

    def collect(self, value: Any, key: Any = None) -> None:
        """First pass: the names left bare, so that the same string is left bare wherever it appears.

        Templates compare user strings with each other (``name in parameters.required``): a
        parameter name that is a bare key must be bare in ``required`` too, or the test flips.
        """
        if isinstance(value, str):
            if key in _COMPARED_VALUES and self.inert(value):
                self.names.add(value)
        elif isinstance(value, Mapping):
            for k, v in stored_items(value):
                if isinstance(k, str) and self.inert(k):
                    self.names.add(k)
                self.collect(v, k)
        elif isinstance(value, (list, tuple)):
            for v in value:
                self.collect(v)

    def walk(self, value: Any, key: Any = None) -> Any:
        if isinstance(value, str):
            if key == "arguments" and _is_json_object(value):
                return self.json_text(value)
            return value if self.bare(value, key) else self.text(value)
        if isinstance(value, Mapping):
            return {
                (k if not isinstance(k, str) or self.bare(k, None) else self.text(k)): self.walk(v, k)
                for k, v in stored_items(value)
            }
        if isinstance(value, (list, tuple)):
            return [self.walk(v) for v in value]
        return value


_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _is_json_object(value: str) -> bool:
    try:
        return isinstance(json.loads(value), dict)
    except (ValueError, RecursionError):
        return False


Inert = Callable[[str], bool]
"""Whether a bare string can never yield a control token (the tokenizer's say; :func:`is_name` by default)."""


Marks = tuple[str, str, str, str]


def _read_marked(
    marked: str, marks: Marks, literals: re.Pattern[str] | None, finder: re.Pattern[str]
) -> tuple[str, Spans]:
    """The text without sentinels, and the spans they mark (multi-character sentinels; *finder*
    matches any of the four)."""
    op, cl, lop, lcl = marks
    spans: list[tuple[int, int]] = []

    def add(start: int, end: int) -> None:
        if end <= start:
            return
        if spans and spans[-1][1] >= start:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))

    clean: list[str] = []
    length = 0
    last = 0
    start: int | None = None
    literal_at: tuple[int, int] | None = None  # (raw end of the lop, clean position) of the last lop
    for match in finder.finditer(marked):
        piece = marked[last : match.start()]
        clean.append(piece)
        length += len(piece)
        last = match.end()
        mark = match.group()
        if mark == op:
            if start is not None:
                raise TemplateError("user text spans: the template reorders or nests user text")
            start = length
        elif mark == cl:
            if start is None:
                raise TemplateError("user text spans: the template keeps only part of a user string")
            add(start, length)
            start = None
        elif mark == lop:
            literal_at = (match.end(), length)
        elif literal_at is not None and literals is not None:
            # A template literal the user typed, kept whole by the template (as it is, or escaped as
            # JSON string text by `tojson`): still user text.
            kept = marked[literal_at[0] : match.start()]
            if literals.fullmatch(kept) or literals.fullmatch(_json_unescaped(kept)):
                add(literal_at[1], length)
            literal_at = None
    if start is not None:
        raise TemplateError("user text spans: the template keeps only part of a user string")
    clean.append(marked[last:])
    return "".join(clean), tuple(spans)


Spans = tuple[tuple[int, int], ...]


def _json_unescaped(text: str) -> str:
    """*text* read as the inside of a JSON string (``\\n`` -> newline), or "" where it is not one."""
    if "\\" not in text:
        return ""
    try:
        value = json.loads('"' + text + '"')
    except ValueError:
        return ""
    return value if isinstance(value, str) else ""


_SENTINELS: list[tuple[Marks, re.Pattern[str]]] = []
"""The sentinel sets last used, with their compiled finders: kept while no request contains them."""


def _sentinels(taken: Callable[[str], bool]) -> list[tuple[Marks, re.Pattern[str]]]:
    """Two sentinel sets, each with a pattern finding its marks: private-use characters, and plain
    ASCII for templates that escape those.

    The same sets serve request after request (compiling their pattern anew each time cost about
    100 us a request) for as long as none of them is *taken*: in the template, the rendering or any
    user string. Correctness rests on that check alone, not on the nonce being secret: a set that
    appears anywhere in a request is replaced before it is used for it.
    """
    cached = _SENTINELS[:]
    if cached and not any(taken(m) for marks, _ in cached for m in marks):
        return cached
    # Digits and uncased characters only, so that templates that change case (`role.title()`) keep them.
    while True:
        nonce = str(secrets.randbelow(10**12)).zfill(12)
        pua = [f"{chr(0xE000 + 2 * i)}{nonce}{chr(0xE001 + 2 * i)}" for i in range(4)]
        plain = [f"~{i}{nonce}{i}~" for i in range(4)]
        sets: list[Marks] = [(pua[0], pua[1], pua[2], pua[3]), (plain[0], plain[1], plain[2], plain[3])]
        if not any(taken(m) for marks in sets for m in marks):
            fresh = [(marks, re.compile("|".join(re.escape(m) for m in marks))) for marks in sets]
            _SENTINELS[:] = fresh
            return fresh


def _unmarked(said: str, marks: Marks) -> str:
    """*said* (a template's error message) without the sentinels of *marks*, as is or JSON-escaped."""
    for mark in marks:
        said = said.replace(mark, "").replace(json.dumps(mark)[1:-1], "")
    return said


def _markup_is_its_own(
    spans: Spans,
    text: str,
    request: list[Any],
    marks: Marks,
    finder: re.Pattern[str],
    literals: re.Pattern[str] | None,
    marker: _RequestMarker,
    render: Callable[[list[Any], list[Any] | None], str],
    everything: str,
) -> bool:
    """Whether the text outside *spans* stays the same when every marked user string's visible characters
    are swapped for others (one to one; whitespace and the template's own literals kept).

    Sentinels prove where user text lands only where the template prints it whole. A template that
    takes user text apart character by character (``content|select(...)|join``, a loop keeping some
    characters) drops the sentinels with the characters it drops, and the characters it keeps would
    land outside every span, trusted as markup: they could spell a control token. Such markup changes
    when the user's characters change; a template's own markup does not.
    """
    visible = sorted({c for s in user_strings(request) for c in s if not c.isspace()})
    # stand-ins from plane 16's private use area, which no template or tokenizer gives a meaning; one that
    # appears anywhere in the request (a rare request, checked in one search) is skipped
    in_use = set(_PLANE_16.findall(everything))
    free = (chr(code) for code in range(0x100000, 0x10FFFE) if chr(code) not in in_use)
    swap = dict(zip(visible, free))
    if len(swap) < len(visible):
        return False  # more distinct characters than stand-ins: not established
    swapped = _RequestMarker(marks, literals, marker.inert, swap)
    swapped.names = marker.names
    messages, tools = request
    try:
        again = render(swapped.walk(messages), swapped.walk(tools) if tools is not None else None)
        clean, moved = _read_marked(again, marks, literals, finder)
    except Exception:  # noqa: BLE001 - the template reacts to the characters themselves: not established
        return False
    return len(moved) == len(spans) and _outside(text, spans) == _outside(clean, moved)


_PLANE_16 = re.compile("[\U00100000-\U0010FFFD]")


def _outside(text: str, spans: Spans) -> list[str]:
    """The pieces of *text* between *spans*."""
    pieces, last = [], 0
    for start, end in spans:
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return pieces


MAX_DEPTH = 100
"""The deepest nesting of lists and dicts a request may have for its user text to be traced."""


def nesting_depth(value: Any) -> int:
    """How deeply *value* nests (iteratively, so a hostile request cannot exhaust the stack here)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, Mapping):
            children: Any = [v for _, v in stored_items(item)]
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def locate_user_text(
    messages: Sequence[Any],
    tools: Sequence[Any] | None,
    text: str,
    render: Callable[[list[Any], list[Any] | None], str],
    source: str = "",
    *,
    inert: Inert = is_name,
    recheck: bool = False,
) -> Spans:
    """The spans of *text* (``render(messages, tools)``) that hold user text.

    User text is every string :func:`user_strings` yields. Each is rendered
    between sentinels except inert names a template must compare as they are
    (dict keys, ``type`` values and ids for which *inert* holds, standard
    roles); those cannot produce a control token on their own. The marked
    rendering, sentinels removed, must equal *text* exactly, so the spans are
    where the template put user text, never a guess. Templates that escape
    private-use characters (``repr``, ASCII JSON) get ASCII sentinels; templates
    that cut user text at one of their literals (``split('</think>')``) get it
    pre-cut. The markup outside the spans must not change when the user's
    characters do (:func:`_markup_is_its_own`; *recheck* runs that check on
    prompter's own reviewed templates too). Raises :class:`TemplateError` when
    no attempt traces the text.
    """
    request = [list(messages), list(tools) if tools is not None else None]
    if nesting_depth(request) > MAX_DEPTH:
        raise TemplateError(f"user text spans: the request nests deeper than {MAX_DEPTH} levels; flatten it")
    strings = set(user_strings(request))
    # One search in all user strings at once: joined by NUL, a needle without NUL is found in the
    # joined text exactly when it is in one of the strings (it cannot straddle two).
    joined = "\x00".join(strings)

    def in_user_text(needle: str) -> bool:
        return needle in joined if "\x00" not in needle else any(needle in s for s in strings)

    def taken(mark: str) -> bool:
        return mark in source or mark in text or in_user_text(mark)

    found = [lit for lit in _template_literals(source) if in_user_text(lit)]
    pattern = re.compile("|".join(re.escape(lit) for lit in found)) if found else None
    pua, ascii_ = _sentinels(taken)
    attempts: list[tuple[tuple[Marks, re.Pattern[str]], re.Pattern[str] | None]] = [(pua, None), (ascii_, None)]
    if pattern is not None:
        attempts += [(pua, pattern), (ascii_, pattern)]
    error: TemplateError | None = None
    for (marks, finder), literals in attempts:
        marker = _RequestMarker(marks, literals, inert)
        marker.collect(request)
        try:
            marked = render(marker.walk(list(messages)), marker.walk(list(tools)) if tools is not None else None)
        except Exception as exc:  # noqa: BLE001 - the template compared marked text and gave up: try the next way
            said = _unmarked(str(exc), marks)  # the template may quote what it got: the user's text, not ours
            error = TemplateError(f"user text spans: the chat template fails on marked user text ({said})")
            continue
        try:
            clean, spans = _read_marked(marked, marks, literals, finder)
        except TemplateError as exc:
            error = exc
            continue
        if clean == text:
            # prompter's own templates are reviewed: none takes user text apart character by character
            # (tests/formats/test_shipped_templates_never_build_markup_from_user_text.py checks each)
            if (source in shipped_sources() and not recheck) or _markup_is_its_own(
                spans, text, request, marks, finder, literals, marker, render, "\x00".join((source, text, joined))
            ):
                return spans
            error = TemplateError(
                "user text spans: the chat template builds its markup out of user text's characters "
                "(it keeps or drops them one by one), so user text could spell a control token there"
            )
            continue
        error = TemplateError(
            "user text spans: the chat template transforms user text (compares, slices or reorders it) "
            "so that where it lands in the prompt cannot be established"
        )
    assert error is not None  # noqa: S101 - attempts is never empty
    raise error
