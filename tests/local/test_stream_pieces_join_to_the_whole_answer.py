"""A stream's pieces join to exactly the whole answer: the same stop, the same text, the same tool calls.

Two ways the stream once drifted from ``m(...)``:

- a stop string arriving over several short pieces was missed when the text seen so far was
  shorter than the stop string but more than half as long (the matcher's tail was sliced with a
  negative start), so the stream ran past the stop to ``max_new_tokens``, and so did the whole
  answer's generation (its text was cut afterwards, but its usage counted every token);
- with tools offered, the whole answer stripped the whitespace around its text while the stream
  had already sent the leading whitespace (and, before a long run of it, the trailing too), so a
  streamed answer never equalled the called one.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.request import GenerationOptions, LocalRequest
from modules.local.streaming import DeltaCutter, StopMatcher, cut_at_stop, first_stop
from modules.local.tool_calls import parse_tool_calls
from modules.local.trainable import TrainableModule

ALPHABET = st.sampled_from("ab \n<>{}")


@settings(max_examples=300, deadline=None)
@given(data=st.data(), text=st.text(ALPHABET, min_size=1, max_size=60), sizes=st.lists(st.integers(1, 3), min_size=1))
def test_a_stop_string_split_over_short_pieces_is_found(data: st.DataObject, text: str, sizes: list[int]) -> None:
    start = data.draw(st.integers(0, len(text) - 1))
    stop = text[start : start + data.draw(st.integers(1, 14))]  # one that occurs, over several pieces
    stops = [stop, *data.draw(st.lists(st.text(ALPHABET, min_size=1, max_size=12), max_size=2))]
    matcher = StopMatcher(stops)
    seen, i, k = "", 0, 0
    while i < len(text):
        piece = text[i : i + sizes[k % len(sizes)]]
        i, k = i + len(piece), k + 1
        seen += piece
        found = matcher.feed(piece)
        assert found == first_stop(seen, stops)
        if found is not None:
            break
    assert first_stop(seen, stops) is not None


def test_a_ten_character_stop_string_fed_two_characters_at_a_time_is_found() -> None:
    matcher = StopMatcher(["abcdefghij"])
    assert [matcher.feed(p) for p in ["ab", "cd", "ef", "gh", "ij"]] == [None, None, None, None, 0]


QWEN = ("<tool_call>", "</tool_call>")
MISTRAL = ("[TOOL_CALLS]", None)
CALL = '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'
BAD_CALL = "<tool_call>not json</tool_call>"
MISTRAL_CALL = '[TOOL_CALLS] [{"name": "g", "arguments": {}}]'
FRAGMENTS = st.sampled_from(["Sure.", " ", "\n", "           ", "done", "ab", CALL, BAD_CALL, MISTRAL_CALL, "<to", "ol"])


def _request() -> LocalRequest:
    return LocalRequest(
        messages=({"role": "user", "content": "x"},),
        tools=({"type": "function", "function": {"name": "f", "parameters": {}}},),
        text="",
        spans=(),
        input_ids=(1, 2, 3),
        options=GenerationOptions.from_kwargs({}, 8),
        dropped=(),
    )


def _calls(calls: Any) -> list[tuple[str, Any]]:
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


@settings(max_examples=400, deadline=None)
@given(
    fragments=st.lists(FRAGMENTS, max_size=8),
    cuts=st.lists(st.integers(1, 7), min_size=1, max_size=8),
    syntax=st.sampled_from([QWEN, MISTRAL]),
    stops=st.sampled_from([(), ("done",), ("\n",)]),
)
def test_with_tools_offered_the_streamed_text_and_calls_equal_the_whole_answers(
    fragments: list[str], cuts: list[int], syntax: tuple[str, str | None], stops: tuple[str, ...]
) -> None:
    answer = "".join(fragments)
    pieces, i, k = [], 0, 0
    while i < len(answer):  # the answer in pieces of the drawn sizes, over and over
        pieces.append(answer[i : i + cuts[k % len(cuts)]])
        i, k = i + cuts[k % len(cuts)], k + 1
    cutter = DeltaCutter(stops, syntax)
    sent = [d.text for d in (cutter.feed(p) for p in pieces) if d is not None]
    last = cutter.finish(_request(), {"ids": [0] * 5, "finish": "length"}, None)

    text, finish = cut_at_stop(answer, stops, "length")  # the whole answer: TrainableModule._answer's steps
    text, calls = parse_tool_calls(text, *syntax)
    assert "".join(sent) + last.text == text
    assert _calls(last.tool_calls) == _calls(calls)
    assert last.finish_reason == ("tool_calls" if calls else finish)


def test_a_long_stop_string_straddling_tokens_ends_the_stream_where_the_call_ends(
    started_module: TrainableModule,  # noqa: F811
) -> None:
    m, n = started_module, 32
    for prompt in ["Tell a joke", "Name a colour"]:
        full = m.respond(prompt, max_new_tokens=n).text
        assert len(full) > 30, "the tiny model's answer is too short to hold a straddling stop string"
        for start in (3, len(full) // 2):
            stop = full[start : start + 12]  # over several tokens: the tiny model's are a few characters long
            expected = full[: full.find(stop)]
            called = m.respond(prompt, stop=[stop], max_new_tokens=n)
            stream = m.stream(prompt, stop=[stop], max_new_tokens=n)
            streamed = list(stream)

            async def astreamed(prompt: str = prompt, stop: str = stop) -> tuple[list[str], str | None]:
                s = m.astream(prompt, stop=[stop], max_new_tokens=n)
                return [piece async for piece in s], s.finish_reason

            assert called.text == "".join(streamed) == expected, stop
            assert called.finish_reason == stream.finish_reason == "stop", stop
            assert asyncio.run(astreamed()) == (streamed, "stop"), stop
            usage: dict[str, int] = {}
            request = m.build_request(prompt, stop=[stop], max_new_tokens=n)
            assert "".join(d.text for d in m.generate_stream(request, usage=usage)) == expected
            assert usage == called.usage, stop  # the call stopped generating where the stream did
            assert called.usage is not None and called.usage["completion_tokens"] < n, stop
