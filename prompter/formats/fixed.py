"""Choosing how a model format renders: fixed strings or the template.

The fast path: a template's derived :class:`~prompter.formats.derive.Layout`, looked up per
(template, tokens) and, with tools, per tools list (by identity, confirmed by an exact fingerprint,
so a list changed in place is noticed), then per tools JSON text (equal tools passed as a new list
every call reuse what was derived). Deriving costs a few dozen template runs, so it happens the second
time a (template, tools) pair is seen (a large tool set: later, :func:`_second_sighting`). Everything else
goes through :func:`render_full`: validation, normalisation, tools injection, the folding of a system
message the template rejects, the sandboxed template, and content spans."""

from __future__ import annotations

import json
from typing import Any

from prompter.errors import MessageError, PromptError
from prompter.formats.budget import ProbeTimedOut
from prompter.formats.continuation import continue_final, continued_field, mark_final
from prompter.formats.derive import Layout, derive_layout
from prompter.formats.hot import register
from prompter.formats.prepare import (
    UNSET,
    exact_fingerprint,
    fingerprint_of,
    fold_system,
    inject_documents,
    inject_tools,
    prepare_documents,
    prepare_messages,
    prepare_tools,
    render_jinja,
    template_messages,
)
from prompter.formats.rendered import FormatSpec, Rendered
from prompter.formats.sandbox import compile_template
from prompter.formats.skeleton import (
    JSON_PER_SIGHTING,
    entry_renderer,
    front_entry,
    render_entry,
    render_entry_messages,
    skeleton_entry,
    skeleton_render_messages,
)
from prompter.formats.skeleton_tools import render_tool_entry
from prompter.formats.spans import locate_content
from prompter.formats.traits import Traits, takes_media, traits_of
from prompter.messages import Message
from prompter.tools import ReadOnlyList

__all__ = ["fast_layout", "fast_render", "render_full", "render_neutral", "template_source"]

_NO_TOOLS: dict[tuple[str, str | None, str | None], Layout | None] = {}
_BY_TOOLS: dict[tuple[int, str, str | None, str | None], tuple[Any, Any, Layout | None]] = {}
_BY_JSON: dict[tuple[str, str, str | None, str | None], Layout | None] = {}
_MAX_TOOL_ENTRIES = 64
_SEEN: dict[tuple[str, str | None, str | None, str | None], int] = {}
_MAX_SEEN = 4096
_FRONT: dict[int, tuple[Any, Layout | None]] = {}
"""The layout (or None) of a format object rendering without tools, by identity: the hot path skips
building and hashing the key (the object is kept, so its id is not reused while it is here)."""
_MAX_FRONT = 256


def _derive(source: str, bos: str | None, eos: str | None, tools_json: str | None) -> Layout | None:
    try:
        return derive_layout(source, bos, eos, tools_json)
    except PromptError:
        return None


def _second_sighting(key: tuple[str, str | None, str | None, str | None]) -> bool:
    """Derive for what is seen twice; with tools (*key*'s last item), once more per JSON_PER_SIGHTING chars."""
    seen = _SEEN.get(key, 0) + 1
    if len(_SEEN) >= _MAX_SEEN:
        _SEEN.clear()
    _SEEN[key] = seen
    return seen >= 2 + len(key[3] or "") // JSON_PER_SIGHTING  # 128 tools: 1.5 s of probes, 5 ms a render


def template_source(fmt: FormatSpec, tools: Any) -> str | None:
    """The template that renders a conversation with ``tools``: the tool-use one when given tools."""
    if tools is not None and fmt.tool_chat_template is not None:
        return fmt.tool_chat_template
    return fmt.chat_template


_ENCODE = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def _tools_json(tools: Any) -> str:
    """The JSON text of ``tools`` as the template sees them (validated and made plain). A prompter's immutable
    tool set (``ReadOnlyList``) gives its own; any other list's ``tools_json`` is a claim, never taken."""
    text = getattr(tools, "tools_json", None) if type(tools) is ReadOnlyList else None
    if type(text) is str:
        return text
    if isinstance(tools, list) and exact_fingerprint(tools) is not None:  # builtins only: no caller's method runs
        try:
            return _ENCODE(tools)  # JSON data already: the same text as after prepare_tools, without the copy
        except (TypeError, ValueError, RecursionError):
            pass
    return json.dumps(prepare_tools(tools), ensure_ascii=False)


def fast_layout(fmt: FormatSpec, tools: Any, fingerprint: Any = UNSET) -> Layout | None:
    """The verified fixed strings for ``fmt``'s template with ``tools``, or None (use the template);
    *fingerprint*: ``exact_fingerprint(tools)`` if the caller computed it in this call."""
    source = template_source(fmt, tools)
    if source is None:
        return None
    if tools is None:
        front = _FRONT.get(id(fmt))
        if front is not None and front[0] is fmt:
            return front[1]
        key = (source, fmt.bos_token, fmt.eos_token)
        try:
            layout = _NO_TOOLS[key]
        except KeyError:
            if not _second_sighting((*key, None)):
                return None
            try:
                layout = _NO_TOOLS[key] = _derive(source, fmt.bos_token, fmt.eos_token, None)
            except ProbeTimedOut:  # kept nowhere: a later render tries again
                return None
        if len(_FRONT) >= _MAX_FRONT:
            _FRONT.clear()
        _FRONT[id(fmt)] = (fmt, layout)
        return layout
    # first level: the same list object (confirmed by its exact fingerprint, so a list
    # changed in place is noticed); second level: equal tools in another list (a prompter
    # passes a fresh list per call), found by their JSON text
    tkey = (id(tools), source, fmt.bos_token, fmt.eos_token)
    entry = _BY_TOOLS.get(tkey)
    fingerprint = fingerprint_of(tools, fingerprint)
    if entry is not None and entry[0] is tools and entry[1] == fingerprint:
        return entry[2]
    try:
        if _traits(fmt, source).tools != "variable":
            return None  # tools reach such a template through the messages: render_full puts them there
        tools_json = _tools_json(tools)
    except (PromptError, TypeError, ValueError):
        return None
    jkey = (tools_json, source, fmt.bos_token, fmt.eos_token)
    if jkey in _BY_JSON:
        return _BY_JSON[jkey]
    if not _second_sighting((source, fmt.bos_token, fmt.eos_token, tools_json)):
        return None
    try:
        layout = _derive(source, fmt.bos_token, fmt.eos_token, tools_json)
    except ProbeTimedOut:
        return None
    for held in (_BY_TOOLS, _BY_JSON):
        if len(held) >= _MAX_TOOL_ENTRIES:
            held.clear()
    if fingerprint is not None:  # else found again by its JSON text only
        _BY_TOOLS[tkey] = (tools, fingerprint, layout)
    _BY_JSON[jkey] = layout
    return layout


def fast_render(fmt: FormatSpec, messages: Any, tools: Any, add_generation_prompt: bool) -> str | None:
    """The prompt by concatenation, or None (the caller renders with :func:`render_full`).

    A leading system message that the template rejects is folded here too, for the
    common shape (plain system and user dicts); anything else is left to ``render_full``.
    """
    # (without tools, ModelFormat.render asked the fast paths registered for ``fmt`` already: hot.HOT)
    fingerprint = None if tools is None else exact_fingerprint(tools)  # once: both caches below confirm with it
    if type(messages) is list and messages and type(messages[-1]) is dict and len(messages[-1]) != 2:
        # an agent step last (a tool call, a tool result): fixed strings take plain turns only
        return _by_skeleton(fmt, messages, tools, add_generation_prompt, agent=True, fingerprint=fingerprint)
    layout = fast_layout(fmt, tools, fingerprint)
    if layout is not None:
        text = layout.render(messages, add_generation_prompt)
        if text is not None:
            if tools is None:  # as do these fixed strings
                register(fmt, layout.render, "layout")
            return text
    text = _by_skeleton(fmt, messages, tools, add_generation_prompt, fingerprint=fingerprint)
    if text is not None or layout is None or layout.system_ok:
        return text
    if type(messages) is not list or len(messages) < 2:
        return None
    system, first = messages[0], messages[1]
    if (
        type(system) is dict
        and len(system) == 2
        and system.get("role") == "system"
        and type(system.get("content")) is str
        and type(first) is dict
        and first.get("role") == "user"
        and type(first.get("content")) is str
    ):
        source = template_source(fmt, tools)
        if source is not None and _traits(fmt, source).system != "kept":
            return layout.render(fold_system(messages), add_generation_prompt)
    return None


def _full_text(
    fmt: FormatSpec, messages: list[dict[str, Any]], tools: Any, add_generation_prompt: bool, use_layout: bool
) -> str:
    """What the template renders for the skeletons' messages: plain ones (built here, so valid) as neutral
    messages, validated no more, not even a probe; agent turns as the dicts they are, validated."""
    if any(len(m) != 2 for m in messages):
        return render_full(fmt, messages, tools, add_generation_prompt, {}, False, use_layout=use_layout).text
    neutral = [Message(m["role"], m["content"]) for m in messages]
    return render_full(fmt, neutral, tools, add_generation_prompt, {}, False, neutral=True, use_layout=use_layout).text


def _by_skeleton(
    fmt: FormatSpec, messages: Any, tools: Any, add: bool, agent: bool = False, fingerprint: Any = UNSET
) -> str | None:
    """The prompt from the shape's cached skeleton (:mod:`~prompter.formats.skeleton`, or
    :mod:`~prompter.formats.skeleton_tools` for agent turns, tried first when ``agent``), or None."""
    source = template_source(fmt, tools)
    if source is None:
        return None
    entry = skeleton_entry(fmt, source, tools, _tools_json, _full_text, fingerprint)
    if entry is None or entry.policy is None:
        return None
    text = None if agent else render_entry(fmt, entry, _full_text, messages, add, tools)
    if text is not None and tools is None:  # the plain skeletons render this format's conversations from now on
        register(fmt, entry_renderer(fmt, entry, _full_text), "skeleton")
    return text if text is not None else render_tool_entry(fmt, source, entry, messages, tools, add, _full_text)


def _from_pieces(pieces: list[str]) -> Rendered:
    spans = []
    pos = 0
    for i, piece in enumerate(pieces):
        end = pos + len(piece)
        if i % 2 and end > pos:
            spans.append((pos, end))
        pos = end
    return Rendered("".join(pieces), tuple(spans))


def render_neutral(fmt: FormatSpec, messages: Any, tools: Any, add_generation_prompt: bool) -> str:
    """The prompt for neutral messages (validated upstream): by concatenation where a layout was
    derived and verified, else through :func:`render_full`, without a second validation."""
    if tools is None:
        entry = front_entry(fmt)
        if entry is not None:
            text = render_entry_messages(fmt, entry, messages, None, add_generation_prompt, _full_text)
            if text is not None:
                return text
    layout = fast_layout(fmt, tools)
    if layout is not None:
        text = layout.render_messages(messages, add_generation_prompt)
        if text is not None:
            return text
    source = template_source(fmt, tools)
    if source is not None:
        text = skeleton_render_messages(
            fmt, source, messages, tools, add_generation_prompt, _full_text, _tools_json
        )
        if text is not None:
            return text
    return render_full(fmt, messages, tools, add_generation_prompt, {}, False, neutral=True).text


def _traits(fmt: FormatSpec, source: str) -> Traits:
    return traits_of(source, fmt.bos_token, fmt.eos_token)


def render_full(
    fmt: FormatSpec,
    messages: Any,
    tools: Any,
    add_generation_prompt: bool,
    kwargs: dict[str, Any],
    want_spans: bool,
    documents: Any = None,
    continue_final_message: bool | str = False,
    *,
    neutral: bool = False,
    use_layout: bool = True,
) -> Rendered:
    """Validate, normalise and render; with ``want_spans``, also locate the content.

    ``neutral``: ``messages`` are :class:`~prompter.messages.Message` values, validated
    once already (a prompter's conversation): they are read, not validated again.
    ``use_layout=False``: always run the template (the reference the fast paths are checked against).
    ``continue_final_message``: the prompt ends right after the final message's text (as
    transformers cuts it), so the model continues that message; no generation prompt.
    """
    if field := continued_field(continue_final_message):  # the final message's field to continue
        add_generation_prompt = False
    source = template_source(fmt, tools)
    if source is None:
        msgs = (
            template_messages(messages, multimodal=False)
            if neutral
            else prepare_messages(messages, multimodal=False)
        )
        docs = prepare_documents(documents)
        if docs:
            msgs = inject_documents(msgs, docs, system_ok=True)
        if field:
            msgs = mark_final(msgs, field)
        rendered = _from_pieces(_fixed_pieces(fmt, msgs, tools, add_generation_prompt))
        return continue_final(rendered, msgs, field) if field else rendered
    compiled = compile_template(source)
    traits = _traits(fmt, source)
    calls = {"string_arguments": traits.string_arguments, "none_content": traits.none_content}
    msgs = (template_messages if neutral else prepare_messages)(messages, multimodal=takes_media(source), **calls)
    tools_p = prepare_tools(tools)
    if tools_p and traits.tools != "variable":
        if traits.tools == "system-json":
            msgs = _tools_in_system_key(msgs, json.dumps(tools_p, ensure_ascii=False))
        elif traits.tools == "system-list":
            msgs = _tools_in_system_key(msgs, tools_p)
        else:
            msgs = inject_tools(msgs, tools_p, system_ok=traits.system == "kept")
        tools_p = None
        if fmt.tool_chat_template is None or source != fmt.tool_chat_template:
            tools = None
    docs = prepare_documents(documents)
    if docs and not traits.documents:
        msgs = inject_documents(msgs, docs, system_ok=traits.system == "kept")
        docs = None
    if msgs and msgs[0]["role"] == "system" and traits.system != "kept":
        msgs = fold_system(msgs)
    if field:
        msgs = mark_final(msgs, field, source)
    # with spans, tools the template reads as a variable are traced through it, not taken as markup
    if use_layout and not kwargs and not docs and not (want_spans and tools_p):
        layout = fast_layout(fmt, tools)
        if layout is not None:
            pieces = layout.pieces(msgs, add_generation_prompt)
            if pieces is not None:
                rendered = _from_pieces(pieces)
                return continue_final(rendered, msgs, field) if field else rendered
    special = {k: v for k, v in (("bos_token", fmt.bos_token), ("eos_token", fmt.eos_token)) if v is not None}

    def run(prepared: list[dict[str, Any]], tools_v: Any = tools_p, docs_v: Any = docs) -> str:
        return render_jinja(
            compiled, prepared, tools_v, add_generation_prompt, special, kwargs, fmt.time_budget, documents=docs_v
        )

    text = run(msgs)
    spans = locate_content(msgs, text, run, source, tools_p, docs) if want_spans else ()
    rendered = Rendered(text, spans)
    return continue_final(rendered, msgs, field) if field else rendered


def _tools_in_system_key(msgs: list[dict[str, Any]], tools: Any) -> list[dict[str, Any]]:
    """Templates that read the tools under the system message's ``tools`` key: Phi-4-mini as a
    JSON string, GLM-4 as a list (the form :mod:`~prompter.formats.traits` found)."""
    if msgs and msgs[0]["role"] == "system":
        return [{**msgs[0], "tools": tools}, *msgs[1:]]
    return [{"role": "system", "content": "", "tools": tools}, *msgs]


def _fixed_pieces(
    fmt: FormatSpec, msgs: list[dict[str, Any]], tools: Any, add_generation_prompt: bool
) -> list[str]:
    """A template-less format: its fixed strings around each (prepared) message (markup, content, ...)."""
    tools_p = prepare_tools(tools)
    if tools_p:
        msgs = inject_tools(msgs, tools_p, system_ok=True)
    pieces = [fmt.bos]
    if (not msgs or msgs[0]["role"] != "system") and fmt.default_system is not None:
        pieces[0] += fmt.sos + fmt.default_system + fmt.eos
    for i, message in enumerate(msgs):
        role, content = message["role"], message["content"]
        if role == "system":
            start, end = fmt.sos, fmt.eos
        elif role == "user":
            start, end = fmt.soh, fmt.eoh
        elif role == "assistant":
            start, end = fmt.soa, fmt.eoa
            calls = [
                fmt.tool_call_start
                + json.dumps(
                    {
                        "name": c.get("function", {}).get("name"),
                        "arguments": c.get("function", {}).get("arguments"),
                    },
                    ensure_ascii=False,
                )
                + fmt.tool_call_end
                for c in message.get("tool_calls", ())
            ]
            if calls:
                joined = "\n".join(calls)
                content = content + "\n" + joined if content else joined
        elif role == "tool":
            start, end = (fmt.soe, fmt.eoe) if fmt.soe or fmt.eoe else (fmt.soh, fmt.eoh)
        else:
            raise MessageError(f"messages[{i}].role: {role!r} is not one of 'system', 'user', 'assistant', 'tool'")
        pieces[-1] += start
        pieces.append(content)
        pieces.append(end)
    if add_generation_prompt:
        pieces[-1] += fmt.generation_prompt
    return pieces
