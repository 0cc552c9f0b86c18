"""Text the model wrote beside a tool call is never dropped: the answer (or block) stays text.

Before the fix text after a Mistral ``[TOOL_CALLS] [...]`` list (or a Granite ``<|tool_call|>``
one), and text inside a Qwen ``<tool_call>`` block after its JSON, vanished: the call came back
and the words were gone; and ``[TOOL_CALLS] []`` deleted the marker and the list while reporting
no call at all. The rule now, as for Llama's bare calls (``call-then-text`` stays text): what
follows a marker without an end is calls and nothing but whitespace, a block is one JSON call and
nothing else, or the answer (the block) stays text, verbatim; an empty list is no call. The
whole answer and the stream agree (both read the whole text with this parser).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from modules.local.streaming import DeltaCutter
from modules.local.tool_calls import parse_tool_calls

CALL = '{"name": "f", "arguments": {"x": 1}}'


@pytest.mark.parametrize(
    ("answer", "start", "end"),
    [
        (f"Sure. [TOOL_CALLS] [{CALL}] and then some words", "[TOOL_CALLS]", None),
        (f"[TOOL_CALLS] [{CALL}]\nDone.", "[TOOL_CALLS]", None),
        (f"[TOOL_CALLS] {CALL} trailing", "[TOOL_CALLS]", None),
        ("Sure. [TOOL_CALLS] []", "[TOOL_CALLS]", None),
        ("[TOOL_CALLS][]", "[TOOL_CALLS]", None),
        (f"<|tool_call|>[{CALL}] words", "<|tool_call|>", None),
        (f"<|python_tag|>{CALL} words", "<|python_tag|>", None),
        (f"<|python_tag|>{CALL}; words", "<|python_tag|>", None),
        (f"Sure.<tool_call>{CALL} junk text</tool_call>", "<tool_call>", "</tool_call>"),
        (f"<tool_call>\n{CALL}\nand more\n</tool_call>", "<tool_call>", "</tool_call>"),
    ],
)
def test_text_beside_the_json_leaves_the_answer_as_text(answer: str, start: str, end: str | None) -> None:
    assert parse_tool_calls(answer, start, end) == (answer, [])


def test_a_block_with_text_beside_it_stays_text_and_the_clean_block_is_still_a_call() -> None:
    bad = f"<tool_call>{CALL} junk</tool_call>"
    text, calls = parse_tool_calls(f"A{bad}<tool_call>\n{CALL}\n</tool_call>")
    assert text == f"A{bad}" and [c["function"]["name"] for c in calls] == ["f"]


def test_deepseek_arguments_with_text_after_the_json_stay_text() -> None:
    start, end = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
    call = '<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"x": 1} and words\n```<｜tool▁call▁end｜>'
    answer = f"Sure.{start}{call}{end}"
    assert parse_tool_calls(answer, start, end) == (answer, [])


@pytest.mark.parametrize(
    ("answer", "start", "calls"),
    [
        (f"[TOOL_CALLS] [{CALL}, {CALL}]  \n", "[TOOL_CALLS]", 2),
        (f"<|python_tag|>{CALL}; {CALL}", "<|python_tag|>", 2),
        (f"Sure.<|tool_call|>{CALL}", "<|tool_call|>", 1),
    ],
)
def test_calls_and_nothing_after_them_are_still_calls(answer: str, start: str, calls: int) -> None:
    text, found = parse_tool_calls(answer, start, None)
    assert text == answer.partition(start)[0].rstrip() and len(found) == calls


@cache
def module() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model())


def test_whole_and_streamed_keep_the_words_after_a_qwen_blocks_json() -> None:
    m = module()
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    request = m.build_request("go", tools=tools)
    answer = f"Sure.<tool_call>\n{CALL} and then I will\n</tool_call>"
    completion = m._completion(answer, "stop", request, 9)
    assert (completion.text, completion.tool_calls, completion.finish_reason) == (answer, (), "stop")
    cutter = DeltaCutter(m._stop_strings(request), m._tool_syntax(request))
    deltas = [cutter.feed(answer[i : i + 3]) for i in range(0, len(answer), 3)]
    last = cutter.finish(request, {"ids": [0], "finish": "stop"}, None)
    assert "".join(d.text for d in [*deltas, last] if d is not None) == answer
    assert (last.tool_calls, last.finish_reason) == ((), "stop")
