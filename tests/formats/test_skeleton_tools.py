"""Agent turns (assistant tool calls, tool results) from skeletons: when they are taken, and that
whatever path renders them gives the sandboxed template's bytes.

Each test renders a shape more than once, so the later renders take the agent-turn skeleton
where the template allows it, and compares with the template itself (``use_layout=False``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_fast_path_equality import TOOLS  # the one weather tool the equality property uses

from prompter.errors import PromptError
from prompter.formats import prepare, skeleton
from prompter.formats.fixed import render_full, template_source
from prompter.formats.model_format import ModelFormat

AGENT = (
    "{% for m in messages %}"
    "{% if m.role == 'assistant' and m.tool_calls %}<call>{% for c in m.tool_calls %}"
    "{{ c.function.name }} ARGS{{ c.function.arguments | tojson }}{% endfor %}</call>"
    "{% elif m.role == 'tool' %}<result id={{ m.tool_call_id }}>RESULT</result>"
    "{% else %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


def agent_format(args: str = "{{ c.function.arguments | tojson }}", result: str = "{{ m.content }}") -> ModelFormat:
    source = AGENT.replace("{{ c.function.arguments | tojson }}", args).replace("RESULT", result)
    return ModelFormat.from_chat_template(source)


def template_says(fmt: ModelFormat, messages: list[dict[str, Any]], tools: Any = None, add: bool = True) -> str:
    return render_full(fmt, messages, tools, add, {}, False, use_layout=False).text


def agent_turn(question: str, arguments: Any, result: str, call_id: str = "abc123XYZ") -> list[dict[str, Any]]:
    call = {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    return [
        {"role": "system", "content": "You help."},
        {"role": "user", "content": question},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "name": "get_weather", "content": result},
    ]


def count_template_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    runs = [0]
    real = prepare.render_template

    def counted(*args: Any, **kwargs: Any) -> str:
        runs[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(prepare, "render_template", counted)
    return runs


def test_an_agent_turn_of_a_known_shape_renders_without_running_the_template(monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = agent_format()
    for _ in range(3):  # the first sightings run the template and probe it
        first = agent_turn("Weather in Paris?", {"city": "Paris"}, '{"temperature": 21}')
        assert fmt.render(first) == template_says(fmt, first)
    runs = count_template_runs(monkeypatch)
    other = agent_turn('And "Nice" <b>?', {"city": "Nice", "days": [1, 2.5, True, None]}, "sunny\n  ")
    text = fmt.render(other)
    assert runs[0] == 0, "a shape already seen should be filled in, not rendered by the template"
    monkeypatch.undo()
    assert text == template_says(fmt, other)
    assert 'ARGS{"city": "Nice", "days": [1, 2.5, true, null]}' in text


def test_arguments_given_as_json_text_render_as_the_template_renders_the_parsed_object() -> None:
    fmt = agent_format()
    for arguments in ('{"city": "Paris", "n": 1e3}', '{"city":"Oslo"}', "{}", "[1]", "not json", ""):
        messages = agent_turn("Weather?", arguments, "ok")
        for _ in range(3):
            try:
                expected: Any = template_says(fmt, messages)
            except Exception as exc:  # noqa: BLE001 - both must refuse alike
                expected = type(exc)
            try:
                got: Any = fmt.render(messages)
            except Exception as exc:  # noqa: BLE001
                got = type(exc)
            assert got == expected, arguments


@pytest.mark.parametrize(
    "args",
    [
        "{{ c.function.arguments | tojson(indent=2) }}",  # not the compact JSON the slot is filled with
        "{% for k, v in c.function.arguments | items %}{{ k }}={{ v }};{% endfor %}",  # item by item
        "{{ c.function.arguments }}",  # a Python repr
        "{{ c.function.arguments | tojson }}{% if 'Paris' in (c.function.arguments | tojson) %}!!{% endif %}",
    ],
)
def test_arguments_the_template_does_not_treat_as_opaque_json_render_through_it(args: str) -> None:
    fmt = agent_format(args=args)
    for city in ("Paris", "Oslo", "Paris", "Oslo"):
        messages = agent_turn("Weather?", {"city": city, "n": [1, {"a": "b"}]}, "ok")
        assert fmt.render(messages) == template_says(fmt, messages)
    assert "!!" not in args or "!!" in fmt.render(agent_turn("Weather?", {"city": "Paris"}, "ok"))


@pytest.mark.parametrize(
    "result",
    [
        "{{ m.content | tojson }}",  # a JSON string (Llama 3.1, Hermes)
        "{{ m.content | trim }}",
        "{{ m.content | upper }}",
        "{% if m.content.startswith('{') %}JSON:{% endif %}{{ m.content }}",
    ],
)
def test_tool_results_render_as_the_template_writes_them(result: str) -> None:
    fmt = agent_format(result=result)
    for text in ('{"t": 21}', 'He said "hi" \\ \n<b>', "  padded \n", "", '{"t": 21}', "plain"):
        messages = agent_turn("Weather?", {"city": "Paris"}, text)
        for _ in range(2):
            assert fmt.render(messages) == template_says(fmt, messages)


def test_ids_and_names_that_look_like_sentinels_render_through_the_template() -> None:
    fmt = agent_format()
    for call_id in ("abc123XYZ", "\ue000\ue100\ue001", "\ue002\ue102\ue003", "abc123XYZ"):
        messages = agent_turn("q", {"city": "x"}, "r", call_id=call_id)
        for _ in range(2):
            assert fmt.render(messages) == template_says(fmt, messages)


@pytest.mark.parametrize("family", ["qwen2.5", "llama-3.1", "hermes-2-pro", "mistral-nemo", "glm-4"])
def test_shipped_templates_take_agent_turn_skeletons(family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """GLM-4's template writes no tool calls at all; the others write the arguments as JSON."""
    fmt = ModelFormat.get(family)
    for _ in range(3):
        messages = agent_turn("Weather in Paris?", {"city": "Paris"}, '{"temperature": 21}')
        assert fmt.render(messages, tools=TOOLS) == template_says(fmt, messages, TOOLS)
    runs = count_template_runs(monkeypatch)
    other = agent_turn("Und in Köln?", {"city": "Köln", "unit": "°C"}, 'Result: "12"\nfine')
    text = fmt.render(other, tools=TOOLS)
    assert runs[0] == 0, f"{family}: a known agent shape should not run the template"
    monkeypatch.undo()
    assert text == template_says(fmt, other, TOOLS)
    source = template_source(fmt, TOOLS)
    assert source is not None
    assert family == "glm-4" or json.dumps({"city": "Köln", "unit": "°C"}, ensure_ascii=False) in text
    entry = skeleton.skeleton_entry(fmt, source, TOOLS, json.dumps, lambda *a: "")
    assert entry is not None and isinstance(entry.tool_policy, skeleton.Policy)


@pytest.mark.parametrize("role", [["user"], {"user": 1}, None, 3, "robot"])
def test_a_malformed_role_beside_an_agent_step_is_refused_as_the_template_path_refuses(role: Any) -> None:
    fmt = agent_format()
    for _ in range(3):
        agent_turn("q", {"city": "x"}, "r")  # the shape is known
        fmt.render(agent_turn("q", {"city": "x"}, "r"))
    messages = [{"role": role, "content": "hi"}, *agent_turn("q", {"city": "x"}, "r")[1:]]
    with pytest.raises(PromptError):
        template_says(fmt, messages)
    with pytest.raises(PromptError):
        fmt.render(messages)


@pytest.mark.parametrize("family", ["llama-3.1", "llama-3.2"])
def test_a_tool_result_the_template_takes_as_its_first_user_message_is_written_as_it_writes_it(family: str) -> None:
    """Llama 3.1 writes tool results as JSON strings, except one standing first, where the tools
    block goes: whether a shape's results are quoted is learnt per shape, not per template."""
    fmt = ModelFormat.get(family)
    for _ in range(3):
        fmt.render(agent_turn("q", {"city": "x"}, "r"), tools=TOOLS)  # results elsewhere: quoted
    for content in ('ctrl \x02 "quoted"\n', 'other \x03 "text"'):
        alone = [{"role": "tool", "tool_call_id": "abc123XYZ", "name": "get_weather", "content": content}]
        for _ in range(3):
            assert fmt.render(alone, tools=TOOLS) == template_says(fmt, alone, TOOLS)
