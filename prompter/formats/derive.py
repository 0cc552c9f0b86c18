"""Deriving fixed per-role strings from a chat template, and the fast path that uses them.

Many chat templates are, in effect, fixed strings around each message:
``<|im_start|>user\\n`` + content + ``<|im_end|>\\n``.  :func:`derive_layout`
finds those strings by *probing*: it renders conversations whose contents are
private-use sentinels, reads the strings between the sentinels, and then checks
the result against the template on every shape it probes (with and without a
system message, one to four rounds, assistant last, with and without the
generation prompt, contents that are empty, padded with whitespace, or that
contain the template's own string literals, or that are as long as a number the
template names; a template naming a number of seven or more, as in
``loop.index > 9``, also on every longer conversation up to two messages past it).  Only a layout that reproduces
the template on all of them is returned; any difference means ``None`` and the
template itself renders.

A layout may carry preconditions learnt from the probes: contents are stripped
(``| trim``), contents must not be empty, or contents must not contain certain
literals (``</think>``).  A conversation that does not meet them, or that is not
*(system) user assistant user ... * with plain string contents, is rendered by
the template.

Why this file is long: :class:`Layout`'s three concatenation loops are the hot path of a bound
prompter and stay beside the probing that makes them safe to use.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from prompter.errors import PromptError, TemplateTimeoutError
from prompter.formats.budget import ProbeTimedOut, may_probe, probe_timed_out, probing
from prompter.formats.char_reads import reads_characters
from prompter.formats.sandbox import CompiledTemplate, compile_template, render_template

__all__ = [
    "MAX_LITERALS",
    "Layout",
    "derive_layout",
    "inspects_text",
    "literals",
    "system_rejected",
    "system_supported",
]

_OPEN, _CLOSE = "\ue000", "\ue001"
_PROBE_BUDGET = 0.25


def _sentinel(i: int) -> str:
    return _OPEN + chr(0xE100 + i) + _CLOSE


@dataclass(frozen=True)
class Layout:
    """Fixed strings that reproduce one template (for one tools value), verified by probing."""

    bos: str
    """Written first, with or without a system message."""
    sos: str
    """Before a leading system message's content."""
    eos: str
    """After it."""
    soh: str
    """Before a user message's content."""
    eoh: str
    """After it."""
    soa: str
    """Before an assistant message's content."""
    eoa: str
    """After it."""
    generation_prompt: str
    """Appended when ``add_generation_prompt`` is true."""
    default_block: str | None
    """What the template writes after ``bos`` when there is no system message (None: nothing)."""
    default_system: str | None
    """The default system prompt inside ``default_block``, when it decomposes as sos + text + eos."""
    system_ok: bool
    """Whether a leading system message can take the fast path."""
    strip: bool
    """Whether the template strips message content."""
    nonempty: bool
    """Whether the fast path needs every content to be non-empty."""
    avoid: tuple[str, ...]
    """Substrings that send a conversation to the template (the template branches on them)."""
    blank: bool = False
    """Whether it also needs contents that are not whitespace only (``content | trim | length == 0``);
    a flag of its own so that templates which only test for empty text pay no per-content check."""

    glue: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """The strings :meth:`render` writes between contents, each made once: what opens the prompt
    (with a system message, without), what follows a system, user or assistant text, and what
    closes the prompt after a user or an assistant text (without, with the generation prompt)."""

    checks: int = field(init=False, repr=False, compare=False)
    """What :meth:`render` does to each content: 0 nothing, 1 strip it, 2 :meth:`_usable` (which strips
    too, where asked)."""

    def __post_init__(self) -> None:
        end_user, end_assistant = self.eoh, self.eoa
        glue = (
            self.bos + self.sos,
            self.bos + (self.default_block or "") + self.soh,
            self.eos + self.soh,
            end_user + self.soa,
            end_assistant + self.soh,
            end_user,
            end_user + self.generation_prompt,
            end_assistant,
            end_assistant + self.generation_prompt,
        )
        object.__setattr__(self, "glue", glue)
        object.__setattr__(self, "checks", 2 if self.nonempty or self.avoid else 1 if self.strip else 0)

    def render(self, messages: Sequence[Any], add_generation_prompt: bool) -> str | None:
        """The prompt by concatenation, or None when ``messages`` is outside what was verified.

        The text is ``bos + sos + system + eos + soh + user + eoh + soa + assistant + eoa + soh ...``;
        the strings between two contents are joined once (:attr:`glue`), so each message costs
        two appends: its content and what follows it.
        """
        if type(messages) is not list or not messages:
            return None
        (open_system, open_plain, after_system, after_user, after_assistant,
         close_user, close_user_prompt, close_assistant, close_assistant_prompt) = self.glue
        checks = self.checks
        first = messages[0]
        rest = messages
        if type(first) is dict and first.get("role") == "system":
            content = first.get("content")
            if not self.system_ok or type(content) is not str or len(first) != 2 or len(messages) < 2:
                return None
            if checks:
                content = self._usable(content)
                if content is None:
                    return None
            parts = [open_system, content, after_system]
            rest = messages[1:]
        else:
            parts = [open_plain]
        user = True
        try:
            for message in rest:
                if type(message) is not dict or len(message) != 2:
                    return None
                content = message["content"]
                if type(content) is not str:
                    return None
                if message["role"] != ("user" if user else "assistant"):
                    return None
                if checks:
                    if checks == 1:
                        content = content.strip()
                    else:
                        content = self._usable(content)
                        if content is None:
                            return None
                parts.append(content)
                parts.append(after_user if user else after_assistant)
                user = not user
        except KeyError:  # no role or no content: not a message these strings render
            return None
        # what follows the last text closes the prompt instead
        if user:  # the last text was an assistant's
            parts[-1] = close_assistant_prompt if add_generation_prompt else close_assistant
        else:
            parts[-1] = close_user_prompt if add_generation_prompt else close_user
        return "".join(parts)

    def render_messages(self, messages: Sequence[Any], add_generation_prompt: bool) -> str | None:
        """:meth:`render` for neutral :class:`~prompter.messages.Message` values, read in place.

        The hot path of a prompter bound to a model: plain text turns only (no tool calls,
        ids, names or content parts), else None and the caller renders another way.
        """
        if self.strip or self.nonempty or self.avoid or not messages:
            return None
        parts = [self.bos]
        append = parts.append
        rest = messages
        first = messages[0]
        if first.role == "system":
            if not self.system_ok or len(messages) < 2 or type(first.content) is not str or first.name is not None:
                return None
            append(self.sos)
            append(first.content)
            append(self.eos)
            rest = messages[1:]
        elif self.default_block is not None:
            append(self.default_block)
        user = True
        for message in rest:
            content = message.content
            if (
                type(content) is not str
                or message.tool_calls
                or message.tool_call_id is not None
                or message.name is not None
                or message.role != ("user" if user else "assistant")
            ):
                return None
            append(self.soh if user else self.soa)
            append(content)
            append(self.eoh if user else self.eoa)
            user = not user
        if add_generation_prompt:
            append(self.generation_prompt)
        return "".join(parts)

    def _usable(self, content: str) -> str | None:
        """The content as the template writes it (stripped where it strips), or None where the strings
        cannot stand in for the template (a literal the template reacts to, or an empty required text)."""
        for literal in self.avoid:
            if literal in content:
                return None
        if self.strip:
            content = content.strip()
        if self.nonempty and (not content or (self.blank and content.isspace())):
            return None
        return content

    def pieces(self, messages: Sequence[Any], add_generation_prompt: bool) -> list[str] | None:
        """The prompt as alternating markup / content pieces (even indexes are markup)."""
        if type(messages) is not list or not messages:
            return None
        out = [self.bos]
        first = messages[0]
        start = 0
        if type(first) is dict and first.get("role") == "system":
            if not self.system_ok:
                return None
            content = first.get("content")
            if type(content) is not str or len(first) != 2:
                return None
            content = self._usable(content)
            if content is None:
                return None
            out[0] += self.sos
            out.append(content)
            out.append(self.eos)
            start = 1
        elif self.default_block is not None:
            out[0] += self.default_block
        soh, eoh, soa, eoa = self.soh, self.eoh, self.soa, self.eoa
        user = True
        for message in messages[start:] if start else messages:
            if type(message) is not dict or len(message) != 2:
                return None
            content = message.get("content")
            if type(content) is not str or message.get("role") != ("user" if user else "assistant"):
                return None
            content = self._usable(content)
            if content is None:
                return None
            out[-1] += soh if user else soa
            out.append(content)
            out.append(eoh if user else eoa)
            user = not user
        if user and len(messages) == start:
            return None
        if add_generation_prompt:
            out[-1] += self.generation_prompt
        return out


_SHAPES: tuple[tuple[str, ...], ...] = (
    ("user",),
    ("system", "user"),
    ("user", "assistant"),
    ("system", "user", "assistant"),
    ("user", "assistant", "user"),
    ("system", "user", "assistant", "user"),
    ("user", "assistant", "user", "assistant", "user"),
    ("system", "user", "assistant", "user", "assistant", "user", "assistant"),
)

_LITERAL = re.compile(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\"""")


MAX_LITERALS = 60
"""More short literals of one kind than this: the template is not probed literal by literal, and no
fixed strings or skeletons stand in for it (every shipped template has at most 40 of each)."""


_INSPECTS = re.compile(
    r"\.\s*(?:is(?:alpha|alnum|ascii|decimal|digit|identifier|lower|numeric|printable|space|title|upper)"
    r"|count|find|rfind|index|rindex|lower|upper|capitalize|casefold|swapcase|title)\s*\("
    r"|\|\s*(?:lower|upper|capitalize|title)\b"
)


def inspects_text(source: str) -> bool:
    """Whether the template calls a string method that inspects a text (``.isalpha()``, ``.count('a')``)
    or maps its case (``| lower``, ``.upper()``: ``content | lower == 'hi'`` reacts to ``HI``, which no
    probe of the literal shows): what such a test reacts to, no probe can be sure to show, so no fixed
    strings or skeletons stand in for it (none of the shipped templates calls one); nor for a template that
    reads a text's characters by position or compares it alphabetically (:mod:`~prompter.formats.char_reads`:
    ``content[0] in 'aeiou'``, ``'a' < content``). The case of a role
    (OpenChat's ``message['role'].title()``) is markup: a role is one of a few known names."""
    return _INSPECTS.search(_ROLE_CASE.sub("", source)) is not None or reads_characters(source)


_ROLE_CASE = re.compile(
    r"""(?:\[\s*['"]role['"]\s*\]|\.role\b)\s*"""
    r"(?:\.\s*(?:lower|upper|capitalize|casefold|swapcase|title)\s*\(\s*\)|\|\s*(?:lower|upper|capitalize|title)\b)"
)


def literals(source: str, words: bool = False) -> list[str]:
    """The template's short string literals, what it may branch on in content: markup-like ones
    (``</think>``), or with ``words`` the identifier-like ones (``'URGENT' in content``)."""
    found: list[str] = []
    for match in _LITERAL.finditer(source):
        text = match.group(1) if match.group(1) is not None else match.group(2)
        text = text.replace("\\n", "\n").replace("\\'", "'").replace('\\"', '"')
        if text.strip() and len(text) <= 40 and text not in found and text.isidentifier() == words:
            found.append(text)
    return found


def _probe(
    compiled: CompiledTemplate, context: dict[str, Any]
) -> Callable[[Sequence[tuple[str, str]], bool], str | None]:
    def render(messages: Sequence[tuple[str, str]], add_generation_prompt: bool) -> str | None:
        ctx = dict(context)
        ctx["messages"] = [{"role": r, "content": c} for r, c in messages]
        ctx["add_generation_prompt"] = add_generation_prompt
        try:
            return render_template(compiled, ctx, time_budget=_PROBE_BUDGET)
        except TemplateTimeoutError:
            raise  # a template that slow is not worth deriving: give up at once
        except PromptError:
            return None

    return render


def _split(text: str | None, sentinels: Sequence[str]) -> list[str] | None:
    """``text`` cut at the sentinels, which must each appear once, in order."""
    if text is None:
        return None
    pieces = []
    pos = 0
    for s in sentinels:
        at = text.find(s, pos)
        if at < 0 or text.count(s) != 1:
            return None
        pieces.append(text[pos:at])
        pos = at + len(s)
    pieces.append(text[pos:])
    return pieces


def _context(bos_token: str | None, eos_token: str | None, tools_json: str | None) -> dict[str, Any]:
    ctx: dict[str, Any] = {}
    if bos_token is not None:
        ctx["bos_token"] = bos_token
    if eos_token is not None:
        ctx["eos_token"] = eos_token
    ctx["tools"] = None if tools_json is None else json.loads(tools_json)
    ctx["documents"] = None
    return ctx


@lru_cache(maxsize=256)
def system_supported(source: str, bos_token: str | None, eos_token: str | None) -> bool:
    """Whether the template renders a leading system message's content (some raise, some drop it)."""
    render = _probe(compile_template(source), _context(bos_token, eos_token, None))
    s0, s1 = _sentinel(0), _sentinel(1)
    try:
        text = render([("system", s0), ("user", s1)], True)
    except TemplateTimeoutError:
        return True
    return text is not None and s0 in text


@lru_cache(maxsize=256)
def system_rejected(source: str, bos_token: str | None, eos_token: str | None) -> bool:
    """Whether the template raises on a leading system message that it would render without.

    True when ``[system, user]`` raises while ``[user]`` renders (Gemma 2's "System role not
    supported", Mistral v0.1's "Conversation roles must alternate"); probed once per template.
    """
    render = _probe(compile_template(source), _context(bos_token, eos_token, None))
    s0, s1 = _sentinel(0), _sentinel(1)
    try:
        for add in (True, False):
            if render([("user", s1)], add) is None:
                return False
            if render([("system", s0), ("user", s1)], add) is None:
                return True
    except TemplateTimeoutError:
        return False
    return False


def _candidate(render: Callable[..., str | None], bos_token: str | None) -> Layout | None:
    s = [_sentinel(i) for i in range(4)]
    u = _split(render([("user", s[1])], False), s[1:2])
    if u is None:
        return None
    ug = _split(render([("user", s[1])], True), s[1:2])
    ua = _split(render([("user", s[1]), ("assistant", s[2])], False), s[1:3])
    uau = _split(render([("user", s[1]), ("assistant", s[2]), ("user", s[3])], False), s[1:4])
    if ug is None or ua is None or uau is None:
        return None
    if ug[0] != u[0] or not ug[1].startswith(u[1]):
        return None
    generation_prompt = ug[1][len(u[1]) :]
    eoh, eoa = uau[3], ua[2]
    if not uau[1].startswith(eoh) or not uau[2].startswith(eoa):
        return None
    soa, soh = uau[1][len(eoh) :], uau[2][len(eoa) :]
    if not uau[0].endswith(soh):
        return None
    head = uau[0][: len(uau[0]) - len(soh)]
    bos = bos_token if bos_token and head.startswith(bos_token) else ""
    rest = head[len(bos) :]
    su = _split(render([("system", s[0]), ("user", s[1])], False), s[0:2])
    sos = eos = ""
    system_ok = False
    if su is not None and su[0].startswith(bos) and su[1].endswith(soh):
        sos, eos = su[0][len(bos) :], su[1][: len(su[1]) - len(soh)]
        system_ok = True
    if rest and system_ok and sos.startswith(rest):
        # what is written with or without a system message ('[gMASK]<sop>') belongs to bos
        bos, sos, rest = bos + rest, sos[len(rest) :], ""
    default_system = None
    if rest and system_ok and len(rest) >= len(sos) + len(eos) and rest.startswith(sos) and rest.endswith(eos):
        default_system = rest[len(sos) : len(rest) - len(eos)]
    return Layout(
        bos,
        sos,
        eos,
        soh,
        eoh,
        soa,
        eoa,
        generation_prompt,
        rest or None,
        default_system,
        system_ok,
        False,
        False,
        (),
    )


def _agrees(
    layout: Layout,
    render: Callable[..., str | None],
    contents: Callable[[int], str],
    shapes: Sequence[tuple[str, ...]] = _SHAPES,
    skip: bool = False,
) -> bool:
    """Whether ``layout`` renders what the template renders on ``shapes`` filled by ``contents``;
    ``skip``: contents the layout declines (its preconditions) are not a disagreement."""
    for shape in shapes:
        if shape[0] == "system" and not layout.system_ok:
            continue
        messages = [(role, contents(i)) for i, role in enumerate(shape)]
        for add in (False, True):
            expected = layout.render([{"role": r, "content": c} for r, c in messages], add)
            if expected is None and skip:
                continue
            if expected is None or render(messages, add) != expected:
                return False
    return True


def _number(i: int) -> str:
    return str(12345 + i)


def _blank(i: int) -> str:
    return BLANK_TEXTS[i % len(BLANK_TEXTS)]


BLANK_TEXTS = (" ", "\n", " \t\n ")
"""Texts of whitespace only, which a template may take for empty ones (``content | trim``)."""


def _capitals(i: int) -> str:
    return f"HELLO WORLD {i}!"


def _short(i: int) -> str:
    """One or two letters, each text its own (a template may branch on ``content | length < 3``;
    the sentinels are three characters long)."""
    return SHORT_TEXTS[i % len(SHORT_TEXTS)]


SHORT_TEXTS = ("q", "zx", "v", "jw", "k", "xq", "z", "wv", "y", "qk")
"""Texts shorter than a sentinel, distinct from each other: what a length threshold below three reacts to."""


def _text(i: int) -> str:
    """Realistic content (both cases, digits, quotes, markup, jinja-looking text, a newline)."""
    return f"Hello World {i}! It's \"quoted\" & <b>bold</b> 10% {{{{ x }}}} [A]\nSecond line, ünïcode 中文."


def derive_layout(source: str, bos_token: str | None, eos_token: str | None, tools_json: str | None) -> Layout | None:
    """Fixed strings that reproduce ``source`` (rendered with these tokens and tools), or None.

    Raises :class:`~prompter.formats.budget.ProbeTimedOut` when the probes ran out of time and a later
    call may try again (:data:`~prompter.formats.budget.PROBE_TRIES`): the caller keeps no answer."""
    key = ("layout", source, bos_token, eos_token, tools_json)
    if not may_probe(key):
        return None  # too slow to learn, every time it was tried
    try:
        return _layout(source, bos_token, eos_token, tools_json)
    except _TooSlow:
        if probe_timed_out(key):
            raise ProbeTimedOut from None
        return None


class _TooSlow(Exception):
    """The probes ran out of time (raised, so that the cache keeps no answer)."""


@lru_cache(maxsize=256)
def _layout(source: str, bos_token: str | None, eos_token: str | None, tools_json: str | None) -> Layout | None:
    compiled = compile_template(source)
    if "strftime_now" in source or inspects_text(source):
        return None  # the output depends on the date, or on what a text says: no string can be fixed
    render = _probe(compiled, _context(bos_token, eos_token, tools_json))
    try:
        with probing() as probe:
            layout = _derive(source, render, bos_token)
    except TemplateTimeoutError:
        raise _TooSlow from None
    if probe.timed_out:
        raise _TooSlow
    return layout


def _derive(source: str, render: Callable[..., str | None], bos_token: str | None) -> Layout | None:
    layout = _candidate(render, bos_token)
    if layout is None or not _agrees(layout, render, _sentinel):
        return None
    padded: Callable[[int], str] = lambda i: "  " + _sentinel(i) + " \n"  # noqa: E731
    if not _agrees(layout, render, padded):
        layout = _replace(layout, strip=True)
        if not _agrees(layout, render, padded) or not _agrees(layout, render, _sentinel):
            return None
    if not _agrees(layout, render, lambda i: _sentinel(i) + "Long text. " * 550, _SHAPES[4:6]):
        return None  # the template reacts to the length of a text (a threshold, a cut)
    long_shapes, sized = _counting_shapes(source), sized_texts(source)
    if long_shapes is None or sized is None or not _agrees(layout, render, _sentinel, long_shapes):
        return None  # the template counts messages further than any shape can show
    if not all(_agrees(layout, render, text, _SHAPES[4:6], skip=True) for text in sized):
        return None  # the template tests a text's exact length
    # an empty text, and one of whitespace only (``content | trim | length == 0``, which no padded text shows)
    if not _agrees(layout, render, lambda i: ""):
        layout = _replace(layout, nonempty=True)
    if not _agrees(layout, render, _blank):
        layout = _replace(layout, nonempty=True, blank=True)
    # what a sentinel cannot show: a template that escapes or case-maps text (``| e``, ``| upper``),
    # compares messages with each other (``content == messages[i - 1].content``) or reads numbers
    # or capitals in them (``| int``, ``.isupper()``)
    for text in (_text, lambda i: _text(0), _number, _capitals, _short):
        if not _agrees(layout, render, text, _SHAPES[4:6], skip=True):
            return None
    marks, words = literals(source), literals(source, words=True)
    if len(marks) > MAX_LITERALS or len(words) > MAX_LITERALS:
        return None
    # a literal inside a text (``'</think>' in content``), and a text that is the literal (``content ==
    # 'hi'``, ``startswith``, ``endswith``); word-like literals are mostly role and key names: two
    # shapes are enough to see a reaction to them
    avoid = [lit for lit in marks if not _agrees(layout, render, _with_literal(lit)) or _reacts(layout, render, lit)]
    avoid += [
        lit
        for lit in words
        if not _agrees(layout, render, _with_literal(lit), _SHAPES[4:6]) or _reacts(layout, render, lit)
    ]
    if avoid:
        layout = _replace(layout, avoid=tuple(avoid))
    return layout


MAX_COUNTED = 64
"""The largest whole number in a template's source that probing follows with conversations that long;
a template naming a larger one gets no fixed strings."""

MAX_SIZED = 100_000
"""The largest whole number in a template's source that probing follows with a text that long
(``content | length == 300``); a template naming a larger one gets no fixed strings or skeletons."""


@lru_cache(maxsize=256)
def _numbers(source: str) -> tuple[float, ...]:
    """The whole numbers (and floats) the template's source names, made positive: what it may count to."""
    import jinja2.nodes

    consts = compile_template(source).template.environment.parse(source).find_all(jinja2.nodes.Const)
    return tuple(sorted({abs(n.value) for n in consts if type(n.value) in (int, float)}))


def _counting_shapes(source: str) -> tuple[tuple[str, ...], ...] | None:
    """Conversations of every length up to past the largest whole number the template names, or None
    when that number is too large to follow.

    A template may branch on how many messages come before one or in all (``loop.index > 9``,
    ``messages | length == 8``): the probed shapes are seven messages at most, so a number at least
    that large is followed with every longer length up to two past it, with and without a leading
    system message (each index then falls on the other role too). Small numbers (``indent=4``,
    ``loop.index0 % 2``) need none.
    """
    reach = max(_numbers(source), default=0)
    if not reach <= MAX_COUNTED:  # NaN too
        return None
    shapes: list[tuple[str, ...]] = []
    for length in range(len(_SHAPES[-1]) + 1, int(reach) + 3):
        turns = tuple("user" if i % 2 == 0 else "assistant" for i in range(length))
        shapes += [turns, ("system", *turns[: length - 1])]
    return tuple(shapes)


def sized_texts(source: str) -> list[Callable[[int], str]] | None:
    """Texts exactly as long as each whole number the template names, or None when one is too large.

    A template may test a text's exact length (``content | length == 13``), which neither the short
    nor the long probes show.
    """
    numbers = _numbers(source)
    if not all(n <= MAX_SIZED for n in numbers):  # NaN too
        return None
    return [_cut(int(n)) for n in numbers if n >= 1 and n == int(n)]


def _cut(size: int) -> Callable[[int], str]:
    """Realistic text of ``size`` characters, each message's its own from the first character (Mistral's
    templates compare messages with each other)."""
    return lambda i: (chr(0x41 + i % 26) + _text(i) * (size // 60 + 1))[:size]


def _reacts(layout: Layout, render: Callable[..., str | None], literal: str) -> bool:
    return not _agrees(layout, render, lambda i: literal, _SHAPES[4:6])


def _with_literal(literal: str) -> Callable[[int], str]:
    return lambda i: _sentinel(i) + literal + _sentinel(i + 20)


def _replace(layout: Layout, **changes: Any) -> Layout:
    import dataclasses

    return dataclasses.replace(layout, **changes)
