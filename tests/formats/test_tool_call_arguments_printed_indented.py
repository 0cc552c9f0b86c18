"""Tool-call arguments a template prints through another JSON printer than compact ``tojson``
(indented, compact separators, sorted keys, then jinja's ``indent`` filter) take the agent-turn
skeleton too, and give the template's bytes.

Command R's tool_use template writes ``tool_call.arguments | tojson(indent=4) | indent(8)``: its
agent turns are compared with transformers' own rendering of the same template, and the skeleton
path is observed by counting the template's runs (none once the shape is known).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_skeleton_tools import agent_format, agent_turn, count_template_runs, template_says
from transformers.utils.chat_template_utils import render_jinja_template

from prompter.formats.fixed import template_source
from prompter.formats.model_format import ModelFormat

TOOLS = [  # Command R's template reads every property's description
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city"}},
                "required": ["city"],
            },
        },
    }
]
LINE_BREAKS = "\n\r\u2028\u2029\x85"
"""JSON escapes the first two; jinja's ``indent`` splits lines at every one of them."""

text = st.text(alphabet=st.sampled_from(["a", "Z", " ", '"', "\\", "{", "}", "ü", "中", "\x02", *LINE_BREAKS]), max_size=8)
scalars = st.one_of(text, st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.booleans(), st.none())
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3), max_leaves=10
)
arguments = st.dictionaries(text, json_values, max_size=4)


def transformers_says(fmt: ModelFormat, messages: list[dict[str, Any]], tools: Any) -> str:
    specials = {k: v for k, v in (("bos_token", fmt.bos_token), ("eos_token", fmt.eos_token)) if v is not None}
    out = render_jinja_template(
        [messages], tools=tools, chat_template=template_source(fmt, tools), add_generation_prompt=True, **specials
    )
    rendered = out[0] if isinstance(out, tuple) else out
    return str(rendered[0] if isinstance(rendered, list) else rendered)


def command_r_agent_turn(calls: list[dict[str, Any]], result: str = '{"temperature": 21}') -> list[dict[str, Any]]:
    tool_calls = [
        {"id": f"call{i}ABCD", "type": "function", "function": {"name": "get_weather", "arguments": args}}
        for i, args in enumerate(calls)
    ]
    return [
        {"role": "system", "content": "You help."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": tool_calls},
        *({"role": "tool", "tool_call_id": c["id"], "name": "get_weather", "content": result} for c in tool_calls),
    ]


def test_command_r_agent_turns_render_as_transformers_and_from_the_skeleton(monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = ModelFormat.get("command-r-tool-use")
    for calls in (1, 2):  # the shapes become known: the first sightings run the template and probe it
        for _ in range(3):
            messages = command_r_agent_turn([{"city": "Paris"}] * calls)
            assert fmt.render(messages, tools=TOOLS) == transformers_says(fmt, messages, TOOLS)
    runs = count_template_runs(monkeypatch)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(arguments, min_size=1, max_size=2))
    def check(calls: list[dict[str, Any]]) -> None:
        messages = command_r_agent_turn(calls)
        before = runs[0]
        text = fmt.render(messages, tools=TOOLS)
        assert runs[0] == before, "a known agent shape should be filled in, not rendered by the template"
        assert text == transformers_says(fmt, messages, TOOLS)

    check()


@pytest.mark.parametrize(
    "args",
    [
        "{{ c.function.arguments | tojson | indent(4) }}",  # compact, but indent splits at U+2028
        "{{ c.function.arguments | tojson(indent=2) }}",
        "{{ c.function.arguments | tojson(indent=4) | indent(8) }}",
        "{{ c.function.arguments | tojson(indent=4) | indent(3, first=true) }}",
        "{{ c.function.arguments | tojson(indent=2) | indent('\t', blank=true) }}",
        "{{ c.function.arguments | tojson(separators=(',', ':')) }}",
        "{{ c.function.arguments | tojson(sort_keys=true) }}",
        "{{ c.function.arguments | tojson(indent=4, sort_keys=true) | indent(2, true, true) }}",
    ],
)
def test_arguments_printed_by_another_json_printer_render_from_the_skeleton_as_the_template_writes_them(
    args: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fmt = agent_format(args=args)
    for _ in range(3):
        first = agent_turn("Weather in Paris?", {"city": "Paris"}, "ok")
        assert fmt.render(first) == template_says(fmt, first)
    runs = count_template_runs(monkeypatch)
    hostile = {"z": "a\u2028\u2028b\x85c\u2029d\n\"q\"", "a": [{}, [], {"k": {"b": 1, "a": [None, 1.5]}}], "m": True}
    for value in (hostile, {}, {"city": "Köln"}):
        messages = agent_turn("And there?", value, "fine")
        before = runs[0]
        text = fmt.render(messages)
        assert runs[0] == before, f"{args}: a known agent shape should be filled in, not rendered by the template"
        assert text == template_says(fmt, messages)


def test_keys_sort_keys_cannot_order_render_through_the_template_as_it_refuses_them() -> None:
    fmt = agent_format(args="{{ c.function.arguments | tojson(sort_keys=true) }}")
    for _ in range(3):
        fmt.render(agent_turn("q", {"city": "Paris"}, "ok"))
    messages = agent_turn("q", {1: "a", "b": 2}, "ok")
    with pytest.raises(Exception) as refused:
        template_says(fmt, messages)
    with pytest.raises(type(refused.value)):
        fmt.render(messages)
