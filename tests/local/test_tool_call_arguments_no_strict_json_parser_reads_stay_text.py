"""A tool-call block whose arguments hold NaN, Infinity or a number beyond a double stays text, never a call.

OpenAI's ``function.arguments`` is JSON text a strict parser reads. Before the fix
``<tool_call>{"name": "f", "arguments": {"x": NaN, "y": 1e999}}</tool_call>`` became a call whose
arguments were ``'{"x": NaN, "y": Infinity}'`` (Python's lenient reader, then ``json.dumps`` with
``allow_nan``): a client's ``JSON.parse`` or this project's own server rejects that text. The rule
now: such a block is not valid JSON for a call, so, as any other block that is not, it is left in
the answer's text (and the finish reason is the text's); the other calls of the answer stay calls.
"""

from __future__ import annotations

import pytest

from modules.local.tool_calls import parse_tool_calls

DEEPSEEK = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")


def deepseek(arguments: str) -> str:
    call = f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{arguments}\n```<｜tool▁call▁end｜>"
    return f"Sure.{DEEPSEEK[0]}{call}{DEEPSEEK[1]}"


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
@pytest.mark.parametrize(
    ("start", "end"),
    [("<tool_call>", "</tool_call>"), ("[TOOL_CALLS]", None), ("<|tool_call|>", None), ("<|python_tag|>", None)],
)
def test_a_block_with_a_number_json_cannot_write_stays_text(start: str, end: str | None, value: str) -> None:
    answer = f'Sure.{start}{{"name": "f", "arguments": {{"x": {value}, "y": 1}}}}{end or ""}'
    assert parse_tool_calls(answer, start, end) == (answer, [])


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_deepseek_call_with_such_arguments_stays_text(value: str) -> None:
    answer = deepseek(f'{{"x": {value}}}')
    assert parse_tool_calls(answer, *DEEPSEEK) == (answer, [])


def test_a_bare_llama_call_with_such_parameters_stays_text() -> None:
    answer = '{"name": "f", "parameters": {"x": NaN}}'
    assert parse_tool_calls(answer, "<|python_tag|>", None, names={"f"}) == (answer, [])


def test_finite_arguments_are_still_calls_beside_a_refused_block() -> None:
    bad = '<tool_call>{"name": "f", "arguments": {"x": NaN}}</tool_call>'
    good = '<tool_call>{"name": "g", "arguments": {"x": 1.5e300, "y": -0.0}}</tool_call>'
    text, calls = parse_tool_calls("A" + bad + good)
    assert text == "A" + bad
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in calls] == [("g", '{"x": 1.5e+300, "y": -0.0}')]
    text, calls = parse_tool_calls(deepseek('{"x": 2.5}'), *DEEPSEEK)
    assert (text, [c["function"]["arguments"] for c in calls]) == ("Sure.", ['{"x": 2.5}'])
