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
(letters of both cases, digits, quotes, markup, jinja-looking text, a newline; also 6,000
characters of it, for templates that cut or test the length of a text, and as many characters
as each number the template names, for ``content | length == 13``), text padded
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

Why this file is long: the hot path (:func:`render_entry`, a few dozen lines) and the probing
that makes it safe to take (:func:`_policy`) share the cache of skeletons and stay side by side,
so that a change to what the hot path assumes is made next to what checks the assumption.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from prompter.errors import PromptError
from prompter.formats.budget import probe_timed_out, probing
from prompter.formats.prepare import UNSET, fingerprint_of

__all__ = [
    "JSON_PER_SIGHTING",
    "Policy",
    "Skeleton",
    "front_entry",
    "entry_renderer",
    "render_entry",
    "render_entry_messages",
    "skeleton_entry",
    "skeleton_render",
    "skeleton_render_messages",
    "today",
]

_OPEN, _CLOSE = "\ue000", "\ue001"
_FIRST = 0xE100
_MAX_MESSAGES = 0xF8FF - _FIRST
_MARK = re.compile("\ue000([\ue100-\uf8ff])\ue001")
_ROLES = frozenset({"system", "user", "assistant"})
_MAX_SKELETONS = 1024
_MAX_SEEN = 4096
_MAX_HELD = 8_000_000
"""Characters of markup (and roles) all skeletons together may hold, about 16-32 MB: past it they
are dropped and rebuilt as needed, so clients sending long conversations of new shapes cannot grow
memory without bound (each new shape costs one sandboxed render, as without skeletons)."""
_HELD = [0]
_DATE_ONLY = re.compile(r"""strftime_now\(\s*(['"])((?:%[dbBYymaAje%]|[^%'"\\])*)\1\s*\)""")

# a render function of the rest of the machinery: (fmt, messages, tools, add_generation_prompt, use_layout) -> text
RenderFull = Callable[[Any, list[dict[str, Any]], Any, bool, bool], str]


def _mark(i: int) -> str:
    return _OPEN + chr(_FIRST + i) + _CLOSE


class Skeleton:
    """A shape's markup: ``markup[0] + content[order[0]] + markup[1] + ... + markup[-1]``."""

    __slots__ = ("markup", "order", "parts", "straight")

    def __init__(self, markup: list[str], order: list[int], count: int) -> None:
        self.markup = markup
        self.order = order
        self.straight = order == list(range(count))
        """Whether every content appears once, in order (the common case: no reordering to do)."""
        parts = [""] * (2 * len(markup) - 1)
        parts[0::2] = markup
        self.parts = parts
        """``markup`` with an empty slot between each two pieces (read only): a copy with the
        contents in the slots is the text's pieces, so a render allocates one list, not two."""

    def fill(self, contents: list[str]) -> str:
        return _interleave(self.parts, contents if self.straight else [contents[i] for i in self.order])


@dataclass(frozen=True)
class Policy:
    """What a template does to content, learnt by probing: the preconditions of its skeletons."""

    whitespace: str
    """``keep`` (content is written as given), ``strip`` (the template trims it), ``refuse`` (it
    reacts otherwise: content with edge whitespace renders through the template), or ``mixed``:
    each role as :attr:`by_role` says (Gemma 3 trims the turns but not the system text)."""
    nonempty: bool
    """Whether empty content must render through the template."""
    avoid: tuple[str, ...]
    """Substrings the template reacts to: content carrying one renders through the template."""
    dated: bool
    """Whether the template reads today's date (skeletons are kept per day)."""
    distinct: bool = False
    """Whether contents must differ from each other (Mistral's templates find the last user
    message by comparing messages: two equal ones both get the tools block)."""
    by_role: tuple[tuple[str, str], ...] = ()
    """For ``mixed``: ``(role, keep | strip | refuse)`` for each role."""
    blank: bool = False
    """With :attr:`nonempty`: whether content of whitespace only must render through the template too
    (``content | trim | length == 0``); its own flag, so a template that only tests for empty text pays
    no per-content check."""
    modes: dict[str, str] = field(init=False, repr=False, compare=False)
    """:attr:`by_role` as a dict, made once (read only)."""
    open: bool = field(init=False, repr=False, compare=False)
    """Whether :meth:`apply` takes every list of contents as it is (no precondition at all)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "modes", dict(self.by_role))
        trivial = self.whitespace == "keep" and not (self.nonempty or self.avoid or self.distinct)
        object.__setattr__(self, "open", trivial)

    def apply(self, contents: list[str], roles: Sequence[str]) -> list[str] | None:
        """The contents as the skeleton takes them, or None where the template must render them."""
        if self.avoid:
            joined = "\x00".join(contents)
            for literal in self.avoid:
                if literal in joined:
                    return None
        if self.whitespace == "mixed":
            modes = self.modes
            copied = False
            for i, role in enumerate(roles):
                mode = modes.get(role, "refuse")  # a role not probed (a tool result): the template renders
                if mode == "keep":
                    continue
                content = contents[i]
                trimmed = content.strip()
                if trimmed == content:
                    continue
                if mode != "strip":
                    return None
                if not copied:  # the caller's list stays as it is
                    contents, copied = list(contents), True
                contents[i] = trimmed
        elif self.whitespace != "keep":
            stripped = list(map(str.strip, contents))
            if self.whitespace == "strip":
                contents = stripped
            elif stripped != contents:
                return None
        if self.nonempty and ("" in contents or (self.blank and _blank_in(contents))):
            return None
        if self.distinct and len(set(contents)) != len(contents):
            return None
        return contents


def _blank_in(contents: list[str]) -> bool:
    """Whether a content is empty or whitespace only."""
    return any(not c or c.isspace() for c in contents)


_PLAIN = Policy("keep", False, (), False)
_MISSING: Any = object()
_SEEN: dict[tuple[Any, ...], int] = {}
_TOOLS: dict[int, tuple[Any, Any, str]] = {}


class _Entry:
    """One template (with its tokens and tools): its policy and its skeletons by shape."""

    __slots__ = ("blank", "bound", "modes", "nonempty", "plain", "policy", "skeletons", "tool_policy")

    def __init__(self) -> None:
        self.policy: Policy | None = None
        self.tool_policy: Policy | bool = True
        """For agent turns (:mod:`~prompter.formats.skeleton_tools`): the policy their skeletons
        were verified under, False where they were not, True until they are first asked for."""
        self.plain = False
        """No precondition on content but perhaps :attr:`nonempty`, and no date: contents go in as
        they are."""
        self.nonempty = False
        """Whether empty content must render through the template (the one precondition ``plain`` allows)."""
        self.blank = False
        """With :attr:`nonempty`: whether content of whitespace only must too."""
        self.modes: dict[str, str] | None = None
        """For a ``mixed`` policy with no other precondition and no date, its mode by role
        (Baichuan 2 trims only the system text, Phi-3 the turns): contents that need no
        trimming go in as they are, as under ``plain``."""
        self.skeletons: dict[tuple[Any, ...], Skeleton | None] = {}
        self.bound: tuple[Any, RenderFull, Callable[..., str | None]] | None = None
        """(format, render_full, :func:`entry_renderer` of both) for :func:`render_entry`."""


_ENTRIES: dict[tuple[Any, ...], _Entry] = {}
_FRONT: dict[int, tuple[Any, str, _Entry]] = {}
"""The entry of a format object rendering without tools, by identity: the hot path skips building
and hashing the full key (the object is kept, so its id is not reused while it is here)."""
_MAX_ENTRIES = 256


def _tools_key(tools: Any, encode: Callable[[Any], str], fingerprint: Any = UNSET) -> str | None:
    """The tools' JSON text, remembered per list object (confirmed by its exact fingerprint, so a
    list changed in place is noticed, even to a value ``==`` calls equal; *fingerprint*: that
    fingerprint when the caller computed it in this call)."""
    entry = _TOOLS.get(id(tools))
    fingerprint = fingerprint_of(tools, fingerprint)
    if entry is not None and entry[0] is tools and entry[1] == fingerprint:
        return entry[2]
    try:
        text = encode(tools)
    except (PromptError, TypeError, ValueError, RecursionError):
        return None
    snapshot = fingerprint
    if snapshot is not None:
        if len(_TOOLS) >= 64:
            _TOOLS.clear()
        _TOOLS[id(tools)] = (tools, snapshot, text)
    return text


_DAY: list[Any] = [0.0, None]  # [until when (time.time()) the cached day holds, the day]


def today() -> tuple[int, int, int]:
    """Today's local date, recomputed at most once a minute (the hot path reads a float)."""
    now = time.time()
    if now >= _DAY[0]:
        local = time.localtime(now)
        seconds_left = 86400 - (local.tm_hour * 3600 + local.tm_min * 60 + local.tm_sec)
        _DAY[0] = now + min(seconds_left, 60)  # short, so a changed clock or zone is noticed soon
        _DAY[1] = local[:3]
    return _DAY[1]  # type: ignore[no-any-return]


def front_entry(fmt: Any) -> _Entry | None:
    """The entry ``fmt`` (an object seen before) renders with when given no tools, or None."""
    front = _FRONT.get(id(fmt))
    return front[2] if front is not None and front[0] is fmt else None


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
    entry = skeleton_entry(fmt, source, tools, encode, render_full)
    if entry is None or entry.policy is None:
        return None
    return render_entry(fmt, entry, render_full, messages, add_generation_prompt, tools)


def render_entry(
    fmt: Any, entry: _Entry, render_full: RenderFull, messages: Any, add_generation_prompt: bool, tools: Any = None
) -> str | None:
    """The prompt of plain ``{"role", "content"}`` dicts from the shape's skeleton, or None."""
    bound = entry.bound  # the renderer of the format that rendered with this entry last, kept
    if bound is None or bound[0] is not fmt or bound[1] is not render_full:
        bound = entry.bound = (fmt, render_full, entry_renderer(fmt, entry, render_full))
    return bound[2](messages, add_generation_prompt, tools)


def entry_renderer(fmt: Any, entry: _Entry, render_full: RenderFull) -> Callable[..., str | None]:
    """The hot path, bound to one format and its entry (what :mod:`~prompter.formats.hot` calls):
    ``(messages, add_generation_prompt, tools=None)`` to the prompt, or None. A closure, so that a
    call reads its entry's settings (fixed once the entry is made) as local cells, not attributes."""
    skeletons = entry.skeletons  # cleared in place when full, never replaced
    plain, nonempty, blank, modes = entry.plain, entry.nonempty, entry.blank, entry.modes

    def render(messages: Any, add_generation_prompt: bool, tools: Any = None) -> str | None:
        if type(messages) is not list or not messages or len(messages) > _MAX_MESSAGES:
            return None
        names: list[str] = []
        contents: list[str] = []
        try:
            for m in messages:
                if type(m) is not dict or len(m) != 2:
                    return None
                role = m["role"]
                content = m["content"]
                if type(content) is not str or type(role) is not str:
                    return None
                names.append(role)
                contents.append(content)
        except KeyError:
            return None
        roles = tuple(names)
        if roles.count("system") > (roles[0] == "system") and _padded_later_system(roles, contents):
            return None  # (the count inlined: a call on every render cost 0.1 us)
        if (plain and not (nonempty and ("" in contents or (blank and _blank_in(contents))))) or _untrimmed(
            modes, roles, contents
        ):
            # the common case, inlined: contents go in as they are; a skeleton is only ever stored for
            # system/user/assistant roles, so a hit needs no role check
            skeleton = skeletons.get((roles, add_generation_prompt))
            if skeleton is not None and skeleton.straight:
                return _interleave(skeleton.parts, contents)
        if not _ROLES.issuperset(roles):
            return None
        return _fill(fmt, entry, roles, contents, tools, add_generation_prompt, render_full, checked=True)

    return render


def _padded_later_system(roles: tuple[str, ...], contents: list[str]) -> bool:
    """Whether a system message past the first has edge whitespace: the probes only ever put a system
    message first, and templates treat a later one apart (Gemma 3 trims it, not the first), so such
    a conversation renders through the template."""
    if not roles or roles.count("system") <= (roles[0] == "system"):  # none past the first (the hot path)
        return False
    return any(role == "system" and content.strip() != content for role, content in zip(roles[1:], contents[1:]))


def _untrimmed(modes: dict[str, str] | None, roles: tuple[str, ...], contents: list[str]) -> bool:
    """Whether a mixed policy's ``modes`` take these contents as they are: every role probed, and
    no content with edge whitespace where its role trims or refuses it (else :func:`_fill` decides)."""
    if modes is None:
        return False
    for role, content in zip(roles, contents):
        mode = modes.get(role)
        if mode is None or (mode != "keep" and content.strip() != content):
            return False
    return True


def _simple_modes(policy: Policy | None) -> dict[str, str] | None:
    """:attr:`_Entry.modes` of ``policy``."""
    if policy is None or policy.whitespace != "mixed" or policy.avoid or policy.nonempty:
        return None
    if policy.distinct or policy.dated:
        return None
    return dict(policy.by_role)


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
    entry = skeleton_entry(fmt, source, tools, encode, render_full)
    if entry is None or entry.policy is None:
        return None
    return render_entry_messages(fmt, entry, messages, tools, add_generation_prompt, render_full)


def render_entry_messages(
    fmt: Any, entry: _Entry, messages: Sequence[Any], tools: Any, add_generation_prompt: bool, render_full: RenderFull
) -> str | None:
    """:func:`render_entry` for neutral messages."""
    if not messages or len(messages) > _MAX_MESSAGES:
        return None
    for m in messages:
        if m[2:5] != _PLAIN_TAIL or type(m.content) is not str:
            return None
    roles = tuple([m.role for m in messages])
    if not _ROLES.issuperset(roles):
        return None
    return _fill(fmt, entry, roles, [m.content for m in messages], tools, add_generation_prompt, render_full)


JSON_PER_SIGHTING = 512
"""Characters of tools JSON that each ask for one more sighting before a tool set is probed (its skeletons
here, its fixed strings in :mod:`~prompter.formats.fixed`): the probes run the template over every tool,
dozens of times, so a large tool set must recur in proportion to its size before it is worth them; a small
one (under 512 characters, four tools or so) is probed at its first render (a render is two sightings)."""


def skeleton_entry(
    fmt: Any,
    source: str,
    tools: Any,
    encode: Callable[[Any], str],
    render_full: RenderFull,
    fingerprint: Any = UNSET,
) -> _Entry | None:
    """The template's entry, once it has been seen twice (a one-off render costs one template run,
    not the probes); None before that, or when the tools cannot be keyed."""
    tools_key = None
    if tools is None:
        front = _FRONT.get(id(fmt))
        if front is not None and front[0] is fmt and front[1] is source:
            return front[2]
    else:
        tools_key = _tools_key(tools, encode, fingerprint)
        if tools_key is None:
            return None
    key = (source, fmt.bos_token, fmt.eos_token, tools_key)
    entry = _ENTRIES.get(key)
    if entry is None:
        seen = _SEEN.get(key, 0) + 1
        if len(_SEEN) >= _MAX_SEEN:
            _SEEN.clear()
        _SEEN[key] = seen
        if seen < 2 + len(tools_key or "") // JSON_PER_SIGHTING:  # 128 tools: 0.9 s of probes, 6 ms a render
            return None
        entry = _Entry()
        policy = _policy(fmt, source, tools, entry, render_full)
        if policy is _MISSING:  # the probes ran out of time: not kept, a later render probes again
            if probe_timed_out(("policy", key)):
                return None
            policy = None
        entry.policy = policy
        entry.plain = entry.policy is not None and replace(entry.policy, nonempty=False, blank=False) == _PLAIN
        entry.nonempty = entry.policy is not None and entry.policy.nonempty
        entry.blank = entry.policy is not None and entry.policy.blank
        entry.modes = _simple_modes(entry.policy)
        if len(_ENTRIES) >= _MAX_ENTRIES:
            _ENTRIES.clear()
            _FRONT.clear()
        _ENTRIES[key] = entry
    if tools is None and entry.policy is not None:
        if len(_FRONT) >= _MAX_ENTRIES:
            _FRONT.clear()
        _FRONT[id(fmt)] = (fmt, source, entry)
    return entry


def _fill(
    fmt: Any,
    entry: _Entry,
    roles: tuple[str, ...],
    contents: list[str],
    tools: Any,
    add_generation_prompt: bool,
    render_full: RenderFull,
    checked: bool = False,
) -> str | None:
    """The prompt from the shape's skeleton (made on first use), or None; *checked*: the caller has
    already ruled out a later system message with edge whitespace (:func:`_padded_later_system`)."""
    policy = entry.policy
    if policy is None or (not checked and _padded_later_system(roles, contents)):
        return None
    if entry.plain and not entry.nonempty:
        skeleton = entry.skeletons.get((roles, add_generation_prompt), _MISSING)
    else:
        usable = policy.apply(contents, roles)
        if usable is None:
            return None
        contents = usable
        skey = (roles, add_generation_prompt, today()) if policy.dated else (roles, add_generation_prompt)
        skeleton = entry.skeletons.get(skey, _MISSING)
    if skeleton is _MISSING:
        skeleton = _skeleton(fmt, entry, roles, tools, add_generation_prompt, policy, render_full)
    if not isinstance(skeleton, Skeleton):
        return None
    return skeleton.fill(contents)


def _interleave(parts: list[str], contents: Sequence[str]) -> str:
    """``parts`` (a :attr:`Skeleton.parts`) with ``contents`` in its slots, joined: one or two
    contents (the most common conversations) as plain concatenation, which is cheaper than a join."""
    if len(contents) == 1:
        return parts[0] + contents[0] + parts[2]
    if len(contents) == 2:
        return parts[0] + contents[0] + parts[2] + contents[1] + parts[4]
    pieces = parts.copy()
    pieces[1::2] = contents
    return "".join(pieces)


def _skeleton(
    fmt: Any,
    entry: _Entry,
    roles: tuple[Any, ...],
    tools: Any,
    add_generation_prompt: bool,
    policy: Policy,
    render_full: RenderFull,
    build: Callable[[Any, Any, Any, bool, RenderFull], Skeleton | None] | None = None,
) -> Skeleton | None:
    """The shape's skeleton, built (by ``build``, :func:`_build` by default) and kept on first use."""
    skey = (roles, add_generation_prompt, today()) if policy.dated else (roles, add_generation_prompt)
    skeleton = entry.skeletons.get(skey, _MISSING)
    if skeleton is _MISSING:
        with probing() as probe:  # a shape the template is slow on: not worth a second full budget
            skeleton = (build or _build)(fmt, roles, tools, add_generation_prompt, render_full)
        if probe.timed_out:
            if probe_timed_out(("skeleton", id(entry), skey)):
                return None  # not kept: a later render of this shape tries again
            skeleton = None
        held = len(roles) + (0 if skeleton is None else sum(map(len, skeleton.markup)))
        _HELD[0] += held
        if _HELD[0] > _MAX_HELD:  # long conversations of ever new shapes must not pile up
            for other in list(_ENTRIES.values()):
                other.skeletons.clear()
            entry.skeletons.clear()
            _HELD[0] = held
        if len(entry.skeletons) >= _MAX_SKELETONS:
            entry.skeletons.clear()
        entry.skeletons[skey] = skeleton
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


def _by_index(text: Callable[[int], str]) -> Callable[[int, str], str]:
    return lambda i, role: text(i)


def _carrying(literal: str) -> Callable[[int, str], str]:
    return lambda i, role: literal + _text(i) + literal


def _takes(policy: Policy, agrees: Callable[..., bool], literal: str) -> bool:
    """Whether the skeletons reproduce the template on texts that carry ``literal`` or are it
    (``content == 'hi'``): in every message, or, where contents must differ, one message at a time."""
    if not agrees(policy, _carrying(literal), _LITERAL_SHAPES):
        return False
    if not policy.distinct:
        return agrees(policy, lambda i, role: literal, _LITERAL_SHAPES)
    return all(
        agrees(policy, lambda i, role, k=k: literal if i == k else _text(i), _LITERAL_SHAPES) for k in range(4)
    )


_PADDED: tuple[Callable[[int], str], ...] = (
    lambda i: "  " + _text(i) + " \n",
    lambda i: "\n" + _text(i) + "\n\n",
    lambda i: "\t" + _text(i),
)


def _policy(fmt: Any, source: str, tools: Any, entry: _Entry, render_full: RenderFull) -> Policy | None:
    """Probe the template: the preconditions under which its skeletons reproduce it, or None; ``_MISSING``
    when the probes ran past their shared time (:data:`~prompter.formats.budget.PROBE_SECONDS`)."""
    with probing() as probe:
        policy = _probe_policy(fmt, source, tools, entry, render_full)
    return _MISSING if probe.timed_out else policy


def _probe_policy(fmt: Any, source: str, tools: Any, entry: _Entry, render_full: RenderFull) -> Policy | None:
    from prompter.formats.derive import BLANK_TEXTS, MAX_LITERALS, SHORT_TEXTS, inspects_text, literals, sized_texts

    dated = "strftime_now" in source
    if dated and len(re.findall(r"strftime_now\s*\(", source)) != len(_DATE_ONLY.findall(source)):
        return None  # a time of day (or a computed format) cannot be fixed for a day
    if inspects_text(source):
        return None  # what ``.isalpha()`` or ``.count('a')`` reacts to, no probe is sure to show
    policy = Policy("keep", False, (), dated)

    def agrees(p: Policy, content: Callable[[int, str], str], shapes: Sequence[tuple[str, ...]]) -> bool:
        for roles in shapes:
            contents = [content(i, role) for i, role in enumerate(roles)]
            usable = p.apply(contents, roles)
            if usable is None:
                continue  # these would render through the template anyway
            for add in (True, False):
                skeleton = _skeleton(fmt, entry, roles, tools, add, p, render_full)
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

    def padded(pad: Callable[[int], str], only: str | None = None) -> Callable[[int, str], str]:
        return lambda i, role: pad(i) if only is None or role == only else _text(i)

    def whitespace(p: Policy, only: str | None) -> str:
        for mode in ("keep", "strip"):
            trial = replace(p, whitespace=mode)
            if all(agrees(trial, padded(pad, only), _PROBE_SHAPES) for pad in _PADDED):
                return mode
        return "refuse"

    try:
        if not agrees(policy, lambda i, role: _text(i), _PROBE_SHAPES):
            return None
        # numbers, capitals and texts shorter than a sentinel, which a template may read (``| int``,
        # ``.isupper()``, ``| length < 3``)
        for other in (
            lambda i, role: str(12345 + i),
            lambda i, role: f"HELLO WORLD {i}!",
            lambda i, role: SHORT_TEXTS[i % len(SHORT_TEXTS)],
        ):
            if not agrees(policy, other, _LITERAL_SHAPES):
                return None
        if not agrees(policy, lambda i, role: _text(i) * 64, _LITERAL_SHAPES):
            return None  # the template reacts to the length of a text (a threshold, a cut)
        sized = sized_texts(source)  # texts as long as each number it names (``content | length == 13``)
        if sized is None or not all(agrees(policy, _by_index(text), _LITERAL_SHAPES) for text in sized):
            return None
        mode = whitespace(policy, None)
        if mode != "keep":
            by_role = tuple((role, whitespace(policy, role)) for role in ("system", "user", "assistant"))
            mixed = replace(policy, whitespace="mixed", by_role=by_role)
            if mode == "refuse" and all(agrees(mixed, padded(pad), _PROBE_SHAPES) for pad in _PADDED):
                policy = mixed
            else:
                policy = replace(policy, whitespace=mode)
        blank = lambda i, role: BLANK_TEXTS[i % len(BLANK_TEXTS)]  # noqa: E731 - ``content | trim | length == 0``
        if not agrees(policy, lambda i, role: "", _PROBE_SHAPES):
            policy = replace(policy, nonempty=True)
        if not agrees(policy, blank, _PROBE_SHAPES):
            policy = replace(policy, nonempty=True, blank=True)
        if not agrees(policy, lambda i, role: _text(0), _PROBE_SHAPES):
            policy = replace(policy, distinct=True)
        marks, words = literals(source), literals(source, words=True)
        if len(marks) > MAX_LITERALS or len(words) > MAX_LITERALS:
            return None
        avoid = [lit for lit in marks + words if not _takes(policy, agrees, lit)]
    except RecursionError:
        return None
    return replace(policy, avoid=tuple(avoid))
