"""Skeletons for agent turns: assistant tool calls and tool results, where the template treats them as data.

A conversation with an agent step in it (an assistant message that calls tools, the tools'
results) has a *shape* too: its roles, and for each call the id, the type and the function
name, for each tool result its ``tool_call_id`` and ``name``, and which contents are empty.
Those go into the shape's key as they are (templates compare them: Mistral's ids must be nine
characters, Llama 3.1 treats its built-in tools' names apart), so the sandboxed template sees
the real ones when the skeleton is built.  What varies freely from one conversation to the next
is kept out of the markup: the text of every non-empty content (tool results included), and
each call's ``arguments``.

Arguments are JSON-serialised by the template (``tool_call.arguments | tojson``, or the whole
function object ``| tojson``).  The skeleton is rendered with a one-key marker object as the
arguments, and the marker's JSON text (``json.dumps(marker, ensure_ascii=False)``, what
transformers' ``tojson`` and the sandbox's write) is cut out of the output; a call's slot is
then filled with ``json.dumps(arguments, ensure_ascii=False)``, which composes the same way
inside an enclosing object.  A template may print them through another deterministic printer
(:func:`_printers`): ``tojson`` with an indent of 2 or 4, compact separators or sorted keys, then
jinja's ``indent`` filter (Command R: ``tojson(indent=4) | indent(8)``); the marker's key breaks
its line twice, so the filter's padding and its ``blank`` option show in the marker's text, and
each slot is filled with that printer's text of the real arguments.  A template that prints
arguments any other way (item by item, as a Python ``repr``) leaves the marker's characters in
the output: no skeleton, the template renders.

Each agent shape's skeleton is checked when it is built: the template renders the same shape once
more with probe values (quotes, backslashes, a newline, a control character, nested arguments),
and the filled skeleton must give those bytes, with tool results as they are or as JSON string
text (Llama 3.1's ``content | tojson``; a result it takes as the first user message stays raw):
what fits is kept with the skeleton, and a shape neither fits renders through the template.
Before any agent-turn skeleton of a template is used, :func:`_verified` also checks a handful of agent
shapes with realistic values (text with quotes, markup, unicode and jinja-looking text; nested
arguments with numbers, booleans, null, lists, escapes; tool results padded with whitespace and
carrying the template's literals) against the sandboxed template, byte for byte, under the
policy the template's plain turns were probed for (:mod:`~prompter.formats.skeleton`), or
a stricter one (tool results with edge whitespace go through the template).  Any disagreement,
and agent turns always render through the template.  A template that takes arguments only as
JSON text (DeepSeek-R1) never takes this path.

Why this file is long: what an agent shape is (:func:`tool_shape`, the hot path), how its skeleton
is cut (:func:`_build`) and the probes that make both safe to use (:func:`_verified`) must agree on
every field of a tool call, so they stay side by side.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from jinja2.filters import do_indent

from prompter.errors import PromptError
from prompter.formats.budget import probe_timed_out, probing
from prompter.formats.skeleton import (
    _MARK,
    _MAX_MESSAGES,
    _ROLES,
    Policy,
    RenderFull,
    Skeleton,
    _Entry,
    _mark,
    _skeleton,
    today,
)

__all__ = ["render_tool_entry", "tool_shape"]

_ARG_OPEN, _ARG_CLOSE = "\ue002", "\ue003"
_BREAKS = "\u2028\u2028"
"""Inside the marker's key: JSON keeps line separators as they are, jinja's ``indent`` splits lines there."""
_SENTINEL_CHARS = ("\ue000", "\ue001", _ARG_OPEN, _ARG_CLOSE)
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(x, ensure_ascii=False)``: the text of transformers' ``tojson`` and of the sandbox's."""


def _no_default(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _arguments_encoder() -> Callable[[Any], str]:
    """:data:`_ENCODE` for the hot path: json's C encoder made once (``JSONEncoder.encode`` makes one
    per call), the same text; circular data raises RecursionError instead of ValueError."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has it
        return _ENCODE
    chunks = make(None, _no_default, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)

    def encode(value: Any) -> str:
        return "".join(chunks(value, 0))

    return encode


_ENCODE_ARGUMENTS = _arguments_encoder()
_MAX_ARGUMENTS = 1000
"""Longer arguments (JSON characters) render through the template, whose ``tojson`` sizes its output
against the budget's cap first: at this length no bound it computes comes near the cap."""
_MAX_PRINTED = 4 * _MAX_ARGUMENTS
"""Likewise for arguments as another printer writes them (indented, deep nesting grows the text)."""
_CALL_KEYS = frozenset({"id", "type", "function"})
_ASSISTANT_KEYS = frozenset({"role", "content", "tool_calls"})
_TOOL_KEYS = frozenset({"role", "content", "tool_call_id", "name"})

Shape = tuple[list[Any], list[str], list[str], list[dict[str, Any]]]
Printer = Callable[[Any], str]


def tool_shape(messages: Sequence[Any]) -> Shape | None:
    """The key parts, the slot values and each slot's kind (its role, or ``arguments``) of a
    conversation with at least one agent-turn message, and the arguments objects in slot order;
    None where anything is outside what this path takes (the template then renders, and validates)."""
    parts: list[Any] = []
    slots: list[str] = []
    kinds: list[str] = []
    objects: list[dict[str, Any]] = []
    agent = False
    for m in messages:
        if type(m) is not dict:
            return None
        role = m.get("role")
        content = m.get("content")
        if len(m) == 2 and type(content) is str and type(role) is str and role in _ROLES:
            parts.append(role)
            slots.append(content)
            kinds.append(role)
            continue
        agent = True
        if role == "assistant":
            calls = m.get("tool_calls")
            if not _ASSISTANT_KEYS.issuperset(m) or type(calls) is not list or not calls:
                return None
            if content is None:
                content = ""
            elif type(content) is not str:
                return None
            if content:
                slots.append(content)
                kinds.append(role)
            keys = []
            for call in calls:
                key = _call(call, slots, kinds, objects)
                if key is None:
                    return None
                keys.append(key)
            parts.append(("assistant", not content, tuple(keys)))
        elif role == "tool":
            call_id, name = m.get("tool_call_id"), m.get("name")
            if (
                not _TOOL_KEYS.issuperset(m)
                or type(content) is not str
                or (type(call_id) is not str and (call_id is not None or "tool_call_id" in m))
                or (type(name) is not str and (name is not None or "name" in m))
            ):
                return None  # (an id or a name given as None included)
            if content:
                slots.append(content)
                kinds.append(role)
            parts.append(("tool", not content, call_id, name))
        else:
            return None
    return (parts, slots, kinds, objects) if agent else None


def _call(
    call: Any, slots: list[str], kinds: list[str], objects: list[dict[str, Any]]
) -> tuple[str | None, str | None, str] | None:
    """One tool call's key (id, type, function name), its arguments' JSON text added as a slot
    (and the arguments to ``objects``)."""
    if type(call) is not dict or not _CALL_KEYS.issuperset(call):
        return None
    function = call.get("function")
    call_id, kind = call.get("id"), call.get("type")
    if type(function) is not dict or len(function) != 2:
        return None
    if type(call_id) is not str and (call_id is not None or "id" in call):
        return None  # an id that is not text (given as None included)
    if type(kind) is not str and (kind is not None or "type" in call):
        return None
    name, arguments = function.get("name"), function.get("arguments")
    if type(name) is not str or not name:
        return None
    if type(arguments) is str:  # OpenAI's form: the template gets the parsed object
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return None
    if type(arguments) is not dict:
        return None
    try:
        text = _ENCODE_ARGUMENTS(arguments)
    except (TypeError, ValueError, RecursionError):
        return None
    if len(text) > _MAX_ARGUMENTS:
        return None
    slots.append(text)
    kinds.append("arguments")
    objects.append(arguments)
    return call_id, kind, name


def _argument_marker(i: int) -> dict[str, Any]:
    return {_ARG_OPEN + chr(0xE100 + i) + _BREAKS + _ARG_CLOSE: 0}


class AgentSkeleton(Skeleton):
    """An agent shape's markup, whether its tool results are written as JSON string text, and how
    its arguments are printed."""

    __slots__ = ("arguments", "printer", "quoted", "results")

    def __init__(
        self, markup: list[str], order: list[int], kinds: list[str], quoted: bool, printer: Printer | None
    ) -> None:
        super().__init__(markup, order, len(kinds))
        self.quoted = quoted
        """Whether the template writes tool results as JSON strings (Llama 3.1's ``content | tojson``,
        except for a tool result it takes as the first user message)."""
        self.results = tuple(j for j, kind in enumerate(kinds) if kind == "tool")
        """The slots that hold tool results (the shape, the skeleton's key, fixes every slot's kind)."""
        self.printer = printer
        """How the template prints arguments; None: as compact JSON, the slot's text as it is."""
        self.arguments = tuple(j for j, kind in enumerate(kinds) if kind == "arguments")

    def filled(self, slots: list[str], objects: list[dict[str, Any]]) -> str | None:
        """The text with ``slots`` in place (``objects``: the arguments, in slot order), or None
        where the template must print the arguments itself."""
        printer = self.printer
        if printer is not None or (self.quoted and self.results):
            slots = slots.copy()
        if printer is not None:
            for j, value in zip(self.arguments, objects, strict=True):
                try:
                    text = printer(value)
                except (TypeError, ValueError, RecursionError):  # keys sort_keys cannot order, say
                    return None
                if len(text) > _MAX_PRINTED:
                    return None
                slots[j] = text
        if self.quoted and self.results:
            for j in self.results:
                slots[j] = _ENCODE(slots[j])[1:-1]
        return self.fill(slots)


def _printer(indent: int | None, separators: Any, sort_keys: bool, layout: tuple[str, bool, bool] | None) -> Printer:
    """``json.dumps(x, ensure_ascii=False, indent=, separators=, sort_keys=)`` (transformers'
    ``tojson``), then ``indent(pad, first, blank)`` where ``layout`` gives one."""
    encode = json.JSONEncoder(ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys).encode
    if layout is None:
        return encode
    pad, first, blank = layout

    def printed(value: Any) -> str:
        return do_indent(encode(value), pad, first, blank)

    return printed


def _printers(text: str, j: int) -> list[Printer | None]:
    """The printers that may have written slot ``j``'s marker into ``text``, compact JSON (None) first:
    after the marker's line breaks, jinja's ``indent`` leaves its padding (and on the empty line
    between them, with ``blank``, the padding again)."""
    layouts: list[tuple[str, bool, bool] | None] = [None]
    at = text.find(chr(0xE100 + j) + "\n")
    end = text.find(_ARG_CLOSE, at)
    if at >= 0 and end >= 0:
        tail = text[at + 2 : end]
        pad = tail[: len(tail) // 2]
        if tail.startswith("\n"):
            layouts = [(tail[1:], True, False), (tail[1:], False, False)]
        elif tail == pad + "\n" + pad:
            layouts = [(pad, True, True), (pad, False, True)]
    found: list[Printer | None] = []
    for indent in (None, 2, 4):
        for separators in (None, (",", ":")):
            for sort_keys in (False, True):
                for layout in layouts:
                    plain = indent is None and separators is None and not sort_keys and layout is None
                    found.append(None if plain else _printer(indent, separators, sort_keys, layout))
    return found


def _messages(
    parts: Any, content: Callable[[int], str], arguments: Callable[[int], Any]
) -> tuple[list[dict[str, Any]], list[str], list[str], list[Any]]:
    """The messages of an agent shape with ``content(i)`` and ``arguments(i)`` for slot ``i``, and
    the slots' values (arguments as their JSON text), kinds and the arguments given, in slot order."""
    messages: list[dict[str, Any]] = []
    values: list[str] = []
    kinds: list[str] = []
    objects: list[Any] = []

    def slot(kind: str) -> str:
        values.append(content(len(values)))
        kinds.append(kind)
        return values[-1]

    for part in parts:
        if type(part) is str:
            messages.append({"role": part, "content": slot(part)})
        elif part[0] == "assistant":
            text = "" if part[1] else slot("assistant")
            calls = []
            for call_id, kind, name in part[2]:
                call: dict[str, Any] = {} if call_id is None else {"id": call_id}
                if kind is not None:
                    call["type"] = kind
                given = arguments(len(values))
                values.append(_ENCODE(given))
                kinds.append("arguments")
                objects.append(given)
                call["function"] = {"name": name, "arguments": given}
                calls.append(call)
            messages.append({"role": "assistant", "content": text, "tool_calls": calls})
        else:
            tool: dict[str, Any] = {"role": "tool", "content": "" if part[1] else slot("tool")}
            if part[2] is not None:
                tool["tool_call_id"] = part[2]
            if part[3] is not None:
                tool["name"] = part[3]
            messages.append(tool)
    return messages, values, kinds, objects


def _probe_text(i: int) -> str:
    return f'Probe {i}: "quoted" \\ <b>&</b>\nnext line, \x02 ünï 中文'


def _probe_arguments(i: int) -> dict[str, Any]:
    """Unsorted keys, nesting, empty containers, and line breaks JSON keeps but ``indent`` splits at."""
    return {"q": f'say "hi" \\ {i}\n\u2028\u2028\x85 \u2029', "n": i, "x": [1.5, None, True, {}, [], {"k": [2]}]}


def _build(fmt: Any, parts: Any, tools: Any, add_generation_prompt: bool, render_full: RenderFull) -> Skeleton | None:
    """Render the agent shape once with sentinel contents and marker arguments and cut the text at
    them, for each printer the arguments' text may come from; then check the cut against the
    template on the same shape with probe values (text with quotes, backslashes, a newline, a
    control character; nested arguments), learning whether tool results are written as JSON strings
    and which printer writes the arguments: a shape no cut passes renders through the template."""
    names = [p for part in parts if type(part) is not str for p in _strings(part)]
    if any(c in name for name in names for c in _SENTINEL_CHARS):
        return None  # an id or a name could pass for a sentinel
    messages, values, kinds, _ = _messages(parts, _mark, _argument_marker)
    probe, probe_values, _, probe_objects = _messages(parts, _probe_text, _probe_arguments)
    try:
        text = render_full(fmt, messages, tools, add_generation_prompt, False)
        expected = render_full(fmt, probe, tools, add_generation_prompt, False)
    except PromptError:
        return None
    # the arguments the template prints (GLM-4's writes none)
    arguments = [j for j, kind in enumerate(kinds) if kind == "arguments" and _ARG_OPEN + chr(0xE100 + j) in text]
    for printer in _printers(text, arguments[0]) if arguments else [None]:
        cut = text
        for j in arguments:
            printed = values[j] if printer is None else printer(_argument_marker(j))
            if printed not in cut:
                break
            cut = cut.replace(printed, _mark(j))
        else:
            skeleton = _cut(cut, kinds, printer, probe_values, probe_objects, expected)
            if skeleton is not None:
                return skeleton
    return None


def _cut(
    text: str,
    kinds: list[str],
    printer: Printer | None,
    probe_values: list[str],
    probe_objects: list[Any],
    expected: str,
) -> AgentSkeleton | None:
    """The skeleton ``text`` cut at its sentinels makes, if filled with the probe values it gives ``expected``."""
    pieces = _MARK.split(text)
    markup = pieces[0::2]
    order = [ord(c) - 0xE100 for c in pieces[1::2]]
    if any(k >= len(kinds) for k in order) or any(c in m for m in markup for c in _SENTINEL_CHARS):
        return None  # the template cut into a sentinel, or printed arguments some other way
    for quoted in (False, True):
        skeleton = AgentSkeleton(markup, order, kinds, quoted, printer)
        if skeleton.filled(probe_values, probe_objects) == expected:
            return skeleton
    return None


def _strings(part: Any) -> list[str]:
    """The strings of a key part (ids, types, names), at any depth."""
    if type(part) is str:
        return [part]
    if type(part) is tuple:
        return [s for item in part for s in _strings(item)]
    return []


def render_tool_entry(
    fmt: Any,
    source: str,
    entry: _Entry,
    messages: Any,
    tools: Any,
    add_generation_prompt: bool,
    render_full: RenderFull,
) -> str | None:
    """The prompt of a conversation with agent turns from its shape's skeleton, or None
    (``source`` is the template that renders with ``tools``, ``entry`` its skeletons)."""
    if type(messages) is not list or not messages or len(messages) > _MAX_MESSAGES:
        return None
    shape = tool_shape(messages)
    if shape is None:
        return None
    policy = entry.tool_policy
    if policy is True:
        verified = _verified(fmt, source, entry, tools, render_full)
        if verified is None:  # the probes ran out of time: a later render tries again, a few times
            entry.tool_policy = True if probe_timed_out(("tools", id(entry))) else False
            return None
        policy = entry.tool_policy = verified
    if not isinstance(policy, Policy):
        return None
    return _fill(fmt, entry, policy, shape, tools, add_generation_prompt, render_full)


def _fill(
    fmt: Any,
    entry: _Entry,
    policy: Policy,
    shape: Shape,
    tools: Any,
    add_generation_prompt: bool,
    render_full: RenderFull,
) -> str | None:
    parts, slots, kinds, objects = shape
    usable = slots if policy.open else policy.apply(slots, kinds)
    if usable is None:
        return None
    key = tuple(parts)
    skey = (key, add_generation_prompt, today()) if policy.dated else (key, add_generation_prompt)
    skeleton = entry.skeletons.get(skey)
    if type(skeleton) is not AgentSkeleton:  # not kept yet (or kept as None: _skeleton says so)
        skeleton = _skeleton(fmt, entry, key, tools, add_generation_prompt, policy, render_full, _build)
        if not isinstance(skeleton, AgentSkeleton):
            return None
    return skeleton.filled(usable, objects)


# -- probing ---------------------------------------------------------------------------------------

_TEXT = "Hello World {i}! It's \"quoted\" & <b>bold</b> 10% {{{{ x }}}} [A]\nSecond line, ünïcode 中文."
_ARGUMENTS: tuple[Callable[[int], dict[str, Any]], ...] = (
    lambda i: {"city": f"Paris {i}", "unit": "celsius"},
    lambda i: {
        "q": f'He said "hi" \\ <b>&</b> ünï 中文\n\u2028{i}',
        "n": i,
        "f": 1.5,
        "ok": True,
        "no": False,
        "x": None,
        "list": [1, "a", {"b": [{}]}],
        "{{ x }}": "{% if %}",
    },
    lambda i: {},
)
_IDS = ("call0ABCD", "call1ABCD")


def _call_dict(j: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": _IDS[j % 2], "type": "function", "function": {"name": name, "arguments": arguments}}


def _agent_shapes(
    content: Callable[[int], str], arguments: Callable[[int], dict[str, Any]], result: Callable[[int], str]
) -> list[list[dict[str, Any]]]:
    def name(j: int) -> str:
        return "get_weather" if j % 2 == 0 else "search"

    def call(j: int) -> dict[str, Any]:
        return _call_dict(j, name(j), arguments(j))

    def tool(j: int) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": _IDS[j % 2], "name": name(j), "content": result(j)}

    user = [{"role": "user", "content": content(0)}]
    return [
        [*user, {"role": "assistant", "content": "", "tool_calls": [call(0)]}, tool(0)],
        [
            {"role": "system", "content": content(1)},
            *user,
            {"role": "assistant", "content": content(2), "tool_calls": [call(0), call(1)]},
            tool(0),
            tool(1),
            {"role": "assistant", "content": content(3)},
            {"role": "user", "content": content(4)},
        ],
        [
            *user,
            {"role": "assistant", "content": None, "tool_calls": [call(1)]},
            tool(1),
            {"role": "assistant", "content": content(5)},
        ],
    ]


def _verified(fmt: Any, source: str, entry: _Entry, tools: Any, render_full: RenderFull) -> Policy | bool | None:
    """The policy under which the template's agent-turn skeletons reproduce it, or False; None when the
    probes ran past their shared time."""
    with probing() as probe:
        policy = _probe_verified(fmt, source, entry, tools, render_full)
    return None if probe.timed_out else policy


def _probe_verified(fmt: Any, source: str, entry: _Entry, tools: Any, render_full: RenderFull) -> Policy | bool:
    from prompter.formats.derive import literals
    from prompter.formats.traits import traits_of

    plain = entry.policy
    if plain is None or traits_of(source, fmt.bos_token, fmt.eos_token).string_arguments:
        return False
    text: Callable[[int], str] = lambda i: _TEXT.format(i=i)  # noqa: E731
    checks: list[list[list[dict[str, Any]]]] = [_agent_shapes(text, args, text) for args in _ARGUMENTS]
    checks.append(_agent_shapes(text, _ARGUMENTS[0], lambda i: "  " + text(i) + " \n"))
    checks.append(_agent_shapes(text, _ARGUMENTS[0], lambda i: '{"temperature": 21, "sky": "clear"}'))
    for literal in literals(source) + literals(source, words=True):
        checks.append(_agent_shapes(*_carrying(literal, text))[1:2])
    candidates = [plain]
    if plain.whitespace != "mixed":
        modes = (("system", plain.whitespace), ("user", plain.whitespace), ("assistant", plain.whitespace))
        candidates.append(replace(plain, whitespace="mixed", by_role=modes))
    for policy in candidates:
        if all(_agrees(fmt, entry, policy, case, tools, render_full) for check in checks for case in check):
            return policy
    return False


def _carrying(
    literal: str, text: Callable[[int], str]
) -> tuple[Callable[[int], str], Callable[[int], dict[str, Any]], Callable[[int], str]]:
    """Contents, arguments and tool results that carry one of the template's literals."""

    def carrying(i: int) -> str:
        return literal + text(i) + literal

    return carrying, lambda i: {"k": literal}, carrying


def _agrees(
    fmt: Any,
    entry: _Entry,
    policy: Policy,
    messages: list[dict[str, Any]],
    tools: Any,
    render_full: RenderFull,
) -> bool:
    shape = tool_shape(messages)
    if shape is None:
        return False
    for add in (True, False):
        try:
            got = _fill(fmt, entry, policy, shape, tools, add, render_full)
        except RecursionError:
            return False
        try:
            expected = render_full(fmt, messages, tools, add, False)
        except PromptError:  # the template refuses the shape (Llama 3.1 takes one call at a time)
            if got is not None:
                return False
            continue
        if got is not None and got != expected:
            return False
    return True
