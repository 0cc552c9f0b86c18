"""Llama 3.1 and 3.2 call the caller's tools with a bare JSON object, and that answer is a tool call.

Their chat templates ask for ``{"name": function name, "parameters": ...}`` and write the
history's calls exactly so (``<|python_tag|>`` is for the built-in tools only), so a model
trained on them answers a call with nothing but that object. Before the fix the module
looked for ``<|python_tag|>`` alone (and Llama 3.2, whose vocabulary has no tag, for
nothing): the call came back as text, in process, streamed and over the server alike.
The oracle for what the model writes is the template's own rendering of a tool-call turn.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from modules.local.streaming import DeltaCutter
from modules.local.tool_calls import parse_tool_calls
from prompter import ChatPrompter

FAMILIES = ["llama-3.1", "llama-3.2"]
TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}  # fmt: skip


def call_turn(city: str, i: int = 0) -> dict[str, Any]:
    call = {"id": f"call{i}", "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


@cache
def module(family: str) -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model(family)).prompt(ChatPrompter(None, enable_system=False))


def written_call(family: str) -> tuple[Any, str]:
    """The request for a question with the tool, and the call as the template writes it after that prompt."""
    m = module(family)
    request = m.build_request("Weather in Lima?", tools=[TOOL])
    whole = m.model_format.render([*request.messages, call_turn("Lima")], tools=list(request.tools))
    assert whole.startswith(request.text)
    answer = whole[len(request.text) :]
    for stop in m.model_format.stop_words:
        answer = answer.split(stop)[0]
    return request, answer


def streamed(m: Any, request: Any, answer: str, size: int) -> tuple[str, list[Any]]:
    cutter = DeltaCutter(m._stop_strings(request), m._tool_syntax(request))
    deltas = [cutter.feed(answer[i : i + size]) for i in range(0, len(answer), size)]
    last = cutter.finish(request, {"ids": [0], "finish": "stop"}, None)
    return "".join(d.text for d in [*deltas, last] if d is not None), list(last.tool_calls)


def names_and_arguments(calls: Any) -> list[tuple[str, Any]]:
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


@pytest.mark.parametrize("family", FAMILIES)
def test_the_call_the_template_writes_is_a_tool_call_whole_and_streamed(family: str) -> None:
    m = module(family)
    request, answer = written_call(family)
    assert answer.lstrip().startswith('{"name": "get_weather"')  # the template's form: no tag
    completion = m._completion(answer, "stop", request, 9)
    assert names_and_arguments(completion.tool_calls) == [("get_weather", {"city": "Lima"})]
    assert (completion.text, completion.finish_reason) == ("", "tool_calls")
    for size in (1, 3, len(answer)):
        text, calls = streamed(m, request, answer, size)
        assert (text, names_and_arguments(calls)) == ("", [("get_weather", {"city": "Lima"})])


@pytest.mark.parametrize(
    "answer",
    ['{"city": "Lima"}', '{"name": "get_weather", "parameters": {"city": "Lima"}} and then', "Sure: {}", '{"na'],
    ids=["json-not-a-call", "call-then-text", "text-then-json", "cut-off"],
)
@pytest.mark.parametrize("family", FAMILIES)
def test_an_answer_that_is_not_only_calls_stays_text_whole_and_streamed(family: str, answer: str) -> None:
    m = module(family)
    request = m.build_request("Weather in Lima?", tools=[TOOL])
    completion = m._completion(answer, "length", request, 9)
    assert (completion.text, completion.tool_calls, completion.finish_reason) == (answer, (), "length")
    assert streamed(m, request, answer, 2) == (answer, [])


def test_two_bare_calls_and_the_tag_form_are_calls() -> None:
    one = '{"name": "f", "parameters": {"a": 1}}'
    two = '{"name": "g", "parameters": {}}'
    for text in (f"{one}; {two}", f" {one}\n{two} ", f"<|python_tag|>{one}"):
        got_text, calls = parse_tool_calls(text, "<|python_tag|>", None)
        assert got_text == ""
        assert [c["function"]["name"] for c in calls] == (["f", "g"] if two in text else ["f"])


def test_without_tools_a_bare_json_answer_is_text() -> None:
    m = module("llama-3.2")
    request = m.build_request("Weather in Lima?")
    answer = '{"name": "get_weather", "parameters": {"city": "Lima"}}'
    assert m._completion(answer, "stop", request, 9).text == answer


def test_a_llama_tuned_on_tool_call_answers_returns_tool_calls(tmp_path: Path) -> None:
    """End to end: trained on the template's own calls, the model writes them, and the module reads them."""
    from transformers.utils import logging as hf_logging

    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    hf_logging.disable_progress_bar()
    cities = ["Lima", "Oslo", "Rome"]
    data = [{"messages": [{"role": "user", "content": f"Weather in {c}?"}, call_turn(c, i)], "tools": [TOOL]}
            for i, c in enumerate(cities)]  # fmt: skip
    base = TrainableModule(cached_tiny_model("llama-3.2"), max_new_tokens=32)
    base.prompt(ChatPrompter(None, enable_system=False))
    tuned = base.finetune(data, tmp_path / "tuned", epochs=30, lr=2e-3, progress=False)
    try:
        answer = tuned("Weather in Rome?", tools=[TOOL])
        assert isinstance(answer, dict) and [c["function"]["name"] for c in answer["tool_calls"]] == ["get_weather"]
        stream = tuned.stream("Weather in Rome?", tools=[TOOL])
        assert "".join(stream) == ""
        assert [c["function"]["name"] for c in stream.tool_calls] == ["get_weather"]
    finally:
        tuned.stop()
