"""What a chat template does with tools, documents, a system message and tool-call arguments.

Read from the template's *output*, not its source: each trait is found by rendering
a small conversation whose strings are private-use sentinels and looking for them
(once per template and tokens, cached).  A template can name ``tools`` and still
never print them (GLM-4 reads ``item['tools']`` from a message, not the ``tools``
variable); only the output tells.

* ``tools``: how the template takes tools: ``"variable"`` (the ``tools`` variable, as
  transformers passes it), ``"system-json"`` / ``"system-list"`` (a ``tools`` key on
  the system message, as a JSON string like Phi-4-mini or as a list like GLM-4), or
  ``"none"`` (it prints no tools: prompter writes them as a text block).
* ``documents``: whether the ``documents`` variable reaches the output.
* ``system``: ``"kept"``, ``"rejected"`` (``[system, user]`` raises while ``[user]``
  renders: Gemma 2, Mistral v0.1) or ``"dropped"`` (it renders without the system
  text: Mistral v0.3); the last two get the system text folded into the user turn.
* ``string_arguments``: whether tool-call ``arguments`` must reach the template as a
  JSON string (DeepSeek-R1 concatenates them) rather than as the parsed object.
* ``none_content``: whether the template writes an assistant's tool calls only when its
  ``content`` is ``None`` (DeepSeek-V2.5 and V3 branch on ``content is none``, and write
  no call for ``content: ""``): such a turn keeps its ``None`` rather than becoming ``""``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from prompter.errors import PromptError, TemplateTimeoutError
from prompter.formats.budget import probe_timed_out, probing
from prompter.formats.sandbox import compile_template, render_template

__all__ = ["Traits", "takes_media", "traits_of"]

_PROBE_BUDGET = 0.25


class _TooSlow(Exception):
    """A probe ran out of time: stop probing a template that slow (a dozen probes would cost seconds)."""
_S = tuple("\ue000" + chr(0xE200 + i) + "\ue001" for i in range(6))

ToolsMode = Literal["variable", "system-json", "system-list", "none"]
SystemMode = Literal["kept", "rejected", "dropped"]


Render = Callable[..., "str | None"]


@dataclass(frozen=True)
class Traits:
    """What one template (with given tokens) does with what a caller may give it."""

    tools: ToolsMode
    documents: bool
    system: SystemMode
    string_arguments: bool
    none_content: bool = False


def _tool(name: str, description: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
        },
    }


_TRAITS: dict[tuple[str, str | None, str | None], Traits] = {}


def traits_of(source: str, bos_token: str | None, eos_token: str | None) -> Traits:
    """The traits of ``source`` rendered with these tokens (probed once, then cached).

    Probes that ran out of time give a guess from the source for this render only: a busy
    moment must not make a template's tools or system message vanish for good. Only after
    :data:`~prompter.formats.budget.PROBE_TRIES` such sessions is the guess kept (a template
    that slow renders with its own budget, which decides).
    """
    key = (source, bos_token, eos_token)
    found = _TRAITS.get(key)
    if found is not None:
        return found
    found, complete = _learn(source, bos_token, eos_token)
    if complete or not probe_timed_out(("traits", *key)):
        if len(_TRAITS) >= 256:
            _TRAITS.clear()
        _TRAITS[key] = found
    return found


def _learn(source: str, bos_token: str | None, eos_token: str | None) -> tuple[Traits, bool]:
    """The traits probed, and whether the probes finished in time."""
    compiled = compile_template(source)
    base: dict[str, Any] = {k: v for k, v in (("bos_token", bos_token), ("eos_token", eos_token)) if v is not None}

    def render(messages: list[dict[str, Any]], add: bool = True, **extra: Any) -> str | None:
        context = {**base, "tools": None, "documents": None, **extra, "messages": messages}
        context["add_generation_prompt"] = add
        try:
            return render_template(compiled, context, time_budget=_PROBE_BUDGET)
        except TemplateTimeoutError:
            raise _TooSlow from None
        except PromptError:
            return None

    # a name in a macro's call is not always among the variables jinja finds, so the source is read too
    names_tools = compiled.uses("tools") or re.search(r"\btools\b", source) is not None
    try:
        with probing():
            return _probe_all(render, names_tools), True
    except _TooSlow:  # what the source says, and the real render (with its own budget) decides
        return Traits("variable" if names_tools else "none", "documents" in source, "kept", False), False


def _probe_all(render: Render, names_tools: bool) -> Traits:
    tools = _tools(render, names_tools)
    return Traits(tools, _documents(render), _system(render), *_calls(render))


def _shows(text: str | None, sentinel: str) -> bool:
    return text is not None and sentinel in text


def _tools(render: Render, names_tools: bool) -> ToolsMode:
    tools = [_tool(_S[0], _S[1])]
    user = {"role": "user", "content": _S[2]}
    alone = render([user], tools=tools)
    with_system = render([{"role": "system", "content": _S[3]}, user], tools=tools)
    if _shows(alone, _S[0]) or _shows(with_system, _S[0]):
        return "variable"
    if names_tools and alone is None and with_system is None:
        # it reads the tools variable and raised on our OpenAI-style probe (Command R wants its
        # own tool shape): the caller's tools go to it as they are, and its error, if any, is typed
        return "variable"
    for mode, value in (("system-json", json.dumps(tools, ensure_ascii=False)), ("system-list", tools)):
        if _shows(render([{"role": "system", "content": _S[3], "tools": value}, user]), _S[0]):
            return mode  # type: ignore[return-value]
    return "none"


def _documents(render: Render) -> bool:
    documents = [{"title": _S[0], "text": _S[1]}]
    return _shows(render([{"role": "user", "content": _S[2]}], documents=documents), _S[1])


def _system(render: Render) -> SystemMode:
    user = {"role": "user", "content": _S[1]}
    both = [{"role": "system", "content": _S[0]}, user]
    for add in (True, False):
        alone = render([user], add)
        if alone is None:
            return "kept"  # the template needs more than a user turn: nothing to learn here
        text = render(both, add)
        if text is None:
            return "rejected"
        if _S[0] not in text and _S[1] in text:
            return "dropped"
    return "kept"


def _calls(render: Render) -> tuple[bool, bool]:
    """``(string_arguments, none_content)``: whether a call's arguments render only as a JSON string
    (the object form raises or vanishes), and whether a call renders only when the assistant's
    content is ``None`` (with ``""`` it vanishes); the content ``""`` is tried first."""

    def conversation(content: Any, arguments: Any) -> list[dict[str, Any]]:
        call = {"id": "call0", "type": "function", "function": {"name": "f", "arguments": arguments}}
        return [{"role": "user", "content": "q"}, {"role": "assistant", "content": content, "tool_calls": [call]}]

    as_object = {"x": _S[4]}
    for content in ("", None):
        for arguments in (as_object, json.dumps(as_object, ensure_ascii=False)):
            for add in (False, True):
                if _shows(render(conversation(content, arguments), add), _S[4]):
                    return isinstance(arguments, str), content is None
    return False, False


@lru_cache(maxsize=256)
def takes_media(source: str) -> bool:
    """Whether the template may read a content list's media parts: it names ``image``, ``audio`` or ``video``
    (Qwen2-Audio's names only audio); any other template gets a content list as its text (the list itself
    would print as its Python repr), and a media part there is refused."""
    return "image" in source or "audio" in source or "video" in source
