"""The fast paths render what the sandboxed template renders, byte for byte, for every family.

``ModelFormat.render`` (and ``render_messages``, a bound prompter's path) answers from
fixed strings (:mod:`~prompter.formats.derive`) or from a shape's cached skeleton
(:mod:`~prompter.formats.skeleton`) once a template has been seen twice.  For generated
conversations — an optional system message, one to six turns, tools or none, with or
without the generation prompt, contents mixing plain text with whitespace, empty text,
the template's own string literals, its special tokens and sentinel-like private-use
characters, and agent steps (an assistant message calling one or two tools with arguments of
any JSON shape, given as an object or as JSON text, and the tools' results) — each render (the first, which runs the template, and the later ones, which
take the fast paths) equals the reference: the sandboxed template itself
(``render_full(..., use_layout=False)``), or both raise a prompter error.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompter.errors import PromptError
from prompter.formats.derive import literals
from prompter.formats.fixed import render_full, template_source
from prompter.formats.model_format import ModelFormat
from prompter.formats.sandbox import compile_template
from prompter.messages import message_from_dict

TEMPLATES = Path(__file__).resolve().parents[2] / "prompter" / "formats" / "chat_templates"
FAMILIES = [e["family"] for e in json.loads((TEMPLATES / "index.json").read_text(encoding="utf-8"))]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


@cache
def pieces(family: str) -> tuple[str, ...]:
    """Text a content may be made of: plain words, whitespace, and what the template reacts to."""
    fmt = ModelFormat.get(family)
    found = ["hello", "World 42", "  ", "\n", "\t", " x ", "{{ x }}", "{% if %}", "\ue000", "\ue101\ue001"]
    for tools in (None, TOOLS):
        source = template_source(fmt, tools)
        if source is not None:
            found += literals(source)[:20] + literals(source, words=True)[:10]
    found += list(fmt.special_tokens[:10])
    return tuple(dict.fromkeys(found))


def contents(family: str) -> st.SearchStrategy[str]:
    return st.lists(
        st.one_of(st.sampled_from(pieces(family)), st.text(max_size=8)), max_size=4
    ).map("".join)


def json_values(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(text, st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.booleans(), st.none())
    return st.recursive(
        scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3), max_leaves=8
    )


@st.composite
def agent_step(draw: Any, family: str) -> list[dict[str, Any]]:
    """An assistant message calling tools (arguments as an object or as JSON text) and their results."""
    text = contents(family)
    calls, results = [], []
    for _ in range(draw(st.integers(1, 2))):
        call_id = draw(st.sampled_from(["abc123XYZ", "call0ABCD", "call_1"]) | text)
        arguments: Any = draw(st.dictionaries(text, json_values(text), max_size=3))
        if draw(st.booleans()):
            arguments = json.dumps(arguments, ensure_ascii=draw(st.booleans()))
        name = draw(st.sampled_from(["get_weather", "search"]) | text.filter(bool))
        calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
        result: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": draw(text)}
        if draw(st.booleans()):
            result["name"] = name
        results.append(result)
    content = draw(st.sampled_from([None, ""]) | text)
    return [{"role": "assistant", "content": content, "tool_calls": calls}, *results]


@st.composite
def requests(draw: Any, family: str) -> tuple[list[dict[str, Any]], Any, bool]:
    text = contents(family)
    messages: list[dict[str, Any]] = [{"role": "system", "content": draw(text)}] if draw(st.booleans()) else []
    turns = draw(st.integers(1, 6))
    for i in range(turns):
        messages.append({"role": "user", "content": draw(text)})
        if draw(st.integers(0, 3)) == 0:  # an agent step: the assistant calls tools, their results follow
            messages += draw(agent_step(family))
            if i < turns - 1 or draw(st.booleans()):
                messages.append({"role": "assistant", "content": draw(text)})
        elif i < turns - 1 or draw(st.booleans()):
            messages.append({"role": "assistant", "content": draw(text)})
    fmt = ModelFormat.get(family)
    source = template_source(fmt, TOOLS)
    reads_tools = source is not None and compile_template(source).uses("tools")
    tools = TOOLS if reads_tools and draw(st.booleans()) else None
    return messages, tools, draw(st.booleans())


def reference(fmt: ModelFormat, messages: Any, tools: Any, add: bool) -> str | type[PromptError]:
    try:
        return render_full(fmt, messages, tools, add, {}, False, use_layout=False).text
    except PromptError:
        return PromptError


def rendered(render: Any) -> str | type[PromptError]:
    try:
        return str(render())
    except PromptError:
        return PromptError


@pytest.mark.parametrize("family", FAMILIES)
def test_fast_paths_render_the_templates_bytes(family: str) -> None:
    fmt = ModelFormat.get(family)

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(requests(family))
    def check(request: tuple[list[dict[str, Any]], Any, bool]) -> None:
        messages, tools, add = request
        expected = reference(fmt, messages, tools, add)
        try:
            neutral = [message_from_dict(m, f"messages[{i}]") for i, m in enumerate(messages)]
        except PromptError:
            neutral = None
        assert neutral is not None or expected is PromptError
        for _ in range(3):  # the first sighting runs the template; later ones take the fast paths
            assert rendered(lambda: fmt.render(messages, tools=tools, add_generation_prompt=add)) == expected
            if neutral is not None:
                assert rendered(lambda: fmt.render_messages(neutral, tools, add)) == expected

    check()
