"""Per-shape skeletons: the template's markup for one sequence of roles, rendered once, reused.

A chat template's markup depends on the *shape* of a conversation (which roles come in
which order, whether the generation prompt is asked for, the tools, the date) far more
than on the text of the messages: the first user turn may carry the system text, the
last one a tools block, every other one fixed strings.  Where one list of fixed strings
(:class:`~prompter.formats.derive.Layout`) cannot express that, a skeleton can: the
conversation's roles are rendered once through the sandboxed template with private-use
sentinels as contents, the text is cut at the sentinels, and later conversations of the
same shape are the markup with their contents put back in the sentinels' places.

That is only sound where the template treats content as opaque text.  Before any skeleton
of a template is used, :func:`_policy` checks it on a dozen shapes with realistic text
(letters of both cases, digits, quotes, markup, jinja-looking text, a newline), text padded
with whitespace (learning whether the template keeps, strips or reacts to it), empty text,
the same text in every message (Mistral's templates compare messages), and text carrying
each of the template's own string literals (``</think>``, ``<tool_call>``): the skeleton
must give, byte for byte, what the template renders for each.  What the template reacts
to becomes a precondition (such content renders through the template); a template that
disagrees on plain text never uses skeletons.  The sandbox and its budget run every
skeleton and every check, so a user's or a model folder's template is held to them as
before; only the repeated work is saved.

Templates that read the date (``strftime_now`` with a date-only format, as Llama 3.2's)
get skeletons per calendar day.  Only plain ``{"role", "content"}`` messages of the
system, user and assistant roles (and neutral messages without tool calls, ids or names)
take this path; everything else renders through the template.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prompter.errors import PromptError

__all__ = ["Policy", "Skeleton", "skeleton_render", "skeleton_render_messages"]

_OPEN, _CLOSE = "\ue000", "\ue001"
_FIRST = 0xE100
_MAX_MESSAGES = 0xF8FF - _FIRST
_MARK = re.compile("\ue000([\ue100-\uf8ff])\ue001")
_ROLES = frozenset({"system", "user", "assistant"})
_MAX_SKELETONS = 1024
_MAX_SEEN = 4096
_DATE_ONLY = re.compile(r"""strftime_now\(\s*(['"])((?:%[dbBYymaAje%]|[^%'"\\])*)\1\s*\)""")

# a render function of the rest of the machinery: (fmt, messages, tools, add_generation_prompt, use_layout) -> text
RenderFull = Callable[[Any, list[dict[str, Any]], Any, bool, bool], str]


def _mark(i: int) -> str:
    return _OPEN + chr(_FIRST + i) + _CLOSE


class Skeleton:
    """A shape's markup: ``markup[0] + content[order[0]] + markup[1] + ... + markup[-1]``."""

    __slots__ = ("markup", "order", "straight")

    def __init__(self, markup: list[str], order: list[int], count: int) -> None:
        self.markup = markup
        self.order = order
        self.straight = order == list(range(count))
        """Whether every content appears once, in order (the common case: no reordering to do)."""

    def fill(self, contents: list[str]) -> str:
        parts = [""] * (2 * len(self.markup) - 1)
        parts[0::2] = self.markup
        parts[1::2] = contents if self.straight else [contents[i] for i in self.order]
        return "".join(parts)


@dataclass(frozen=True)
class Policy:
    """What a template does to content, learnt by probing: the preconditions of its skeletons."""

    whitespace: str
    """``keep`` (content is written as given), ``strip`` (the template trims it) or
    ``refuse`` (it reacts otherwise: content with edge whitespace renders through the template)."""
    nonempty: bool
    """Whether empty content must render through the template."""
    avoid: tuple[str, ...]
    """Substrings the template reacts to: content carrying one renders through the template."""
    dated: bool
    """Whether the template reads today's date (skeletons are kept per day)."""
    distinct: bool = False
    """Whether contents must differ from each other (Mistral's templates find the last user
    message by comparing messages: two equal ones both get the tools block)."""

    def apply(self, contents: list[str]) -> list[str] | None:
        """The contents as the skeleton takes them, or None where the template must render them."""
        if self.avoid:
            joined = "\x00".join(contents)
            for literal in self.avoid:
                if literal in joined:
                    return None
        if self.whitespace != "keep":
            stripped = list(map(str.strip, contents))
            if self.whitespace == "strip":
                contents = stripped
            elif stripped != contents:
                return None
        if self.nonempty and "" in contents:
            return None
        if self.distinct and len(set(contents)) != len(contents):
            return None
        return contents


_MISSING: Any = object()
_POLICIES: dict[tuple[Any, ...], Policy | None] = {}
_SKELETONS: dict[tuple[Any, ...], Skeleton | None] = {}
_SEEN: dict[tuple[Any, ...], int] = {}
_TOOLS: dict[int, tuple[Any, Any, str]] = {}


def _tools_key(tools: Any, encode: Callable[[Any], str]) -> str | None:
    """The tools' JSON text, remembered per list object (checked against a snapshot, so a list
    changed in place is noticed)."""
    entry = _TOOLS.get(id(tools))
    if entry is not None and entry[0] is tools and entry[1] == tools:
        return entry[2]
    import copy

    try:
        text = encode(tools)
        snapshot = copy.deepcopy(tools)
    except (PromptError, TypeError, ValueError, RecursionError):
        return None
    if len(_TOOLS) >= 64:
        _TOOLS.clear()
    _TOOLS[id(tools)] = (tools, snapshot, text)
    return text


def _today() -> tuple[int, int, int]:
    return time.localtime()[:3]


def skeleton_render(
    fmt: Any,
    source: str,
    messages: Any,
    tools: Any,
    add_generation_prompt: bool,
    render_full: RenderFull,
    encode: Callable[[Any], str],
) -> str | None:
    """The prompt from a cached skeleton, or None (the caller renders through the template)."""
    if type(messages) is not list or not messages or len(messages) > _MAX_MESSAGES:
        return None
    names: list[str] = []
    contents: list[str] = []
    for m in messages:
        if type(m) is not dict or len(m) != 2:
            return None
        role = m.get("role")
        content = m.get("content")
        if type(content) is not str or type(role) is not str:
            return None
        names.append(role)
        contents.append(content)
    roles = tuple(names)
    if not _ROLES.issuperset(roles):
        return None
    return _fill(fmt, source, roles, contents, tools, add_generation_prompt, render_full, encode)


_PLAIN_TAIL: tuple[Any, ...] = ((), None, None)


def skeleton_render_messages(
    fmt: Any,
    source: str,
    messages: Sequence[Any],
    tools: Any,
    add_generation_prompt: bool,
    render_full: RenderFull,
    encode: Callable[[Any], str],
) -> str | None:
    """:func:`skeleton_render` for neutral messages (plain text turns only)."""
    if not messages or len(messages) > _MAX_MESSAGES:
        return None
    for m in messages:
        if m[2:5] != _PLAIN_TAIL or type(m.content) is not str:
            return None
    roles = tuple([m.role for m in messages])
    if not _ROLES.issuperset(roles):
        return None
    contents = [m.content for m in messages]
    return _fill(fmt, source, roles, contents, tools, add_generation_prompt, render_full, encode)


def _fill(
    fmt: Any,
    source: str,
    roles: tuple[str, ...],
    contents: list[str],
    tools: Any,
    add_generation_prompt: bool,
    render_full: RenderFull,
    encode: Callable[[Any], str],
) -> str | None:
    tools_key = None
    if tools is not None:
        tools_key = _tools_key(tools, encode)
        if tools_key is None:
            return None
    key = (source, fmt.bos_token, fmt.eos_token, tools_key)
    policy = _POLICIES.get(key, _MISSING)
    if policy is _MISSING:
        seen = _SEEN.get(key, 0) + 1
        if len(_SEEN) >= _MAX_SEEN:
            _SEEN.clear()
        _SEEN[key] = seen
        if seen < 2:
            return None  # a one-off render costs one template run, not the probes
        policy = _POLICIES[key] = _policy(fmt, source, tools, key, render_full)
    if policy is None:
        return None
    usable = policy.apply(contents)
    if usable is None:
        return None
    skeleton = _skeleton(fmt, key, roles, tools, add_generation_prompt, policy, render_full)
    return None if skeleton is None else skeleton.fill(usable)


def _skeleton(
    fmt: Any,
    key: tuple[Any, ...],
    roles: tuple[str, ...],
    tools: Any,
    add_generation_prompt: bool,
    policy: Policy,
    render_full: RenderFull,
) -> Skeleton | None:
    skey = (key, roles, add_generation_prompt, _today() if policy.dated else None)
    skeleton = _SKELETONS.get(skey, _MISSING)
    if skeleton is _MISSING:
        skeleton = _build(fmt, roles, tools, add_generation_prompt, render_full)
        if len(_SKELETONS) >= _MAX_SKELETONS:
            _SKELETONS.clear()
        _SKELETONS[skey] = skeleton
    return skeleton  # type: ignore[no-any-return]


def _build(
    fmt: Any, roles: Sequence[str], tools: Any, add_generation_prompt: bool, render_full: RenderFull
) -> Skeleton | None:
    """Render the shape once with sentinel contents and cut the text at the sentinels."""
    messages = [{"role": role, "content": _mark(i)} for i, role in enumerate(roles)]
    try:
        text = render_full(fmt, messages, tools, add_generation_prompt, True)
    except PromptError:
        return None
    pieces = _MARK.split(text)
    markup = pieces[0::2]
    order = [ord(c) - _FIRST for c in pieces[1::2]]
    if any(i >= len(roles) for i in order) or any(_OPEN in m or _CLOSE in m for m in markup):
        return None  # the template cut into a sentinel: its content is not opaque to it
    return Skeleton(markup, order, len(roles))


_PROBE_SHAPES: tuple[tuple[str, ...], ...] = (
    ("user",),
    ("system", "user"),
    ("user", "assistant"),
    ("system", "user", "assistant"),
    ("system", "user", "assistant", "user"),
    ("user", "assistant", "user", "assistant", "user"),
    ("system", "user", "assistant", "user", "assistant", "user", "assistant"),
)
_LITERAL_SHAPES = (("system", "user", "assistant", "user"), ("user", "assistant", "user", "assistant"))


def _text(i: int) -> str:
    return f"Hello World {i}! It's \"quoted\" & <b>bold</b> 10% {{{{ x }}}} [A]\nSecond line, ünïcode 中文."


def _carrying(literal: str) -> Callable[[int], str]:
    return lambda i: literal + _text(i) + literal


_PADDED: tuple[Callable[[int], str], ...] = (
    lambda i: "  " + _text(i) + " \n",
    lambda i: "\n" + _text(i) + "\n\n",
    lambda i: "\t" + _text(i),
)


def _policy(
    fmt: Any, source: str, tools: Any, key: tuple[Any, ...], render_full: RenderFull
) -> Policy | None:
    """Probe the template: the preconditions under which its skeletons reproduce it, or None."""
    dated = "strftime_now" in source
    if dated and len(re.findall(r"strftime_now\s*\(", source)) != len(_DATE_ONLY.findall(source)):
        return None  # a time of day (or a computed format) cannot be fixed for a day
    policy = Policy("keep", False, (), dated)

    def agrees(p: Policy, content: Callable[[int], str], shapes: Sequence[tuple[str, ...]]) -> bool:
        for roles in shapes:
            contents = [content(i) for i in range(len(roles))]
            usable = p.apply(contents)
            if usable is None:
                continue  # these would render through the template anyway
            for add in (True, False):
                skeleton = _skeleton(fmt, key, roles, tools, add, p, render_full)
                if skeleton is None:
                    continue
                messages = [{"role": r, "content": c} for r, c in zip(roles, contents)]
                try:
                    expected = render_full(fmt, messages, tools, add, False)
                except PromptError:
                    return False
                if skeleton.fill(usable) != expected:
                    return False
        return True

    try:
        if not agrees(policy, _text, _PROBE_SHAPES):
            return None
        if not all(agrees(policy, pad, _PROBE_SHAPES) for pad in _PADDED):
            policy = Policy("strip", False, (), dated)
            if not all(agrees(policy, pad, _PROBE_SHAPES) for pad in _PADDED):
                policy = Policy("refuse", False, (), dated)
        if not agrees(policy, lambda i: "", _PROBE_SHAPES):
            policy = Policy(policy.whitespace, True, (), dated)
        if not agrees(policy, lambda i: _text(0), _PROBE_SHAPES):
            policy = Policy(policy.whitespace, policy.nonempty, (), dated, distinct=True)
        from prompter.formats.derive import literals

        avoid = [literal for literal in literals(source) if not agrees(policy, _carrying(literal), _LITERAL_SHAPES)]
    except RecursionError:
        return None
    return Policy(policy.whitespace, policy.nonempty, tuple(avoid), dated, policy.distinct)
