"""A Llama answer that is JSON data, not a call in the template's shape, stays the answer's text.

Llama 3.1 and 3.2 write a call to one of the caller's tools as a bare JSON object,
``{"name": ..., "parameters": {...}}``, with no marker. Before the fix any bare JSON object
with a string ``"name"`` was taken for a call: ``{"name": "Alice", "age": 30}`` (a user asking
for a JSON record, say) came back as a call to ``Alice`` with arguments ``'{}'``, its text and
other fields dropped and finish_reason ``tool_calls``. Now a bare object is a call only when it
is exactly ``name`` (an offered tool's) and a ``parameters`` (or ``arguments``) object, as
docs/local-models.md says; vLLM's ``llama3_json`` parser requires the arguments too. The
whole answer and the stream (threaded cutter) agree.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from modules.local.streaming import DeltaCutter
from modules.local.tool_calls import parse_tool_calls
from prompter import ChatPrompter

TOOL = {"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}  # fmt: skip

DATA = {
    "record-with-name": '{"name": "Alice", "age": 30}',
    "name-only": '{"name": "Alice"}',
    "tool-name-and-extra-key": '{"name": "get_weather", "parameters": {"city": "Lima"}, "note": "x"}',
    "parameters-not-an-object": '{"name": "get_weather", "parameters": "Lima"}',
    "parameters-a-list": '{"name": "get_weather", "parameters": ["Lima"]}',
    "both-parameters-and-arguments": '{"name": "get_weather", "parameters": {}, "arguments": {}}',
    "a-call-then-a-record": '{"name": "get_weather", "parameters": {"city": "Lima"}}; {"name": "Alice", "age": 3}',
    "not-an-offered-tool": '{"name": "Alice", "parameters": {"age": 30}}',
}


@cache
def module() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("llama-3.2")).prompt(ChatPrompter(None, enable_system=False))


def streamed(m: Any, request: Any, answer: str, size: int) -> tuple[str, list[Any], str]:
    cutter = DeltaCutter(m._stop_strings(request), m._tool_syntax(request))
    deltas = [cutter.feed(answer[i : i + size]) for i in range(0, len(answer), size)]
    last = cutter.finish(request, {"ids": [0], "finish": "stop"}, None)
    return "".join(d.text for d in [*deltas, last] if d is not None), list(last.tool_calls), last.finish_reason


@pytest.mark.parametrize("answer", list(DATA.values()), ids=list(DATA))
def test_json_data_is_the_answers_text_whole_and_streamed(answer: str) -> None:
    m = module()
    request = m.build_request("Tell me about Alice as JSON", tools=[TOOL])
    completion = m._completion(answer, "stop", request, 9)
    assert (completion.text, completion.tool_calls, completion.finish_reason) == (answer, (), "stop")
    for size in (1, 4, len(answer)):
        assert streamed(m, request, answer, size) == (answer, [], "stop")


@pytest.mark.parametrize("answer", [v for k, v in DATA.items() if k != "not-an-offered-tool"])
def test_the_parser_alone_leaves_json_data_as_text(answer: str) -> None:
    assert parse_tool_calls(answer, "<|python_tag|>", None) == (answer, [])


@pytest.mark.parametrize("key", ["parameters", "arguments"])
def test_the_templates_shape_naming_an_offered_tool_is_still_a_call_whole_and_streamed(key: str) -> None:
    m = module()
    request = m.build_request("Weather in Lima?", tools=[TOOL])
    answer = json.dumps({"name": "get_weather", key: {"city": "Lima"}})
    completion = m._completion(answer, "stop", request, 9)
    assert completion.finish_reason == "tool_calls" and completion.text == ""
    assert [json.loads(c["function"]["arguments"]) for c in completion.tool_calls] == [{"city": "Lima"}]
    text, calls, finish = streamed(m, request, answer, 3)
    assert (text, [c["function"]["name"] for c in calls], finish) == ("", ["get_weather"], "tool_calls")
