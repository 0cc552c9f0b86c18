"""Streamed tool calls that carry no ``index`` are told apart by their ``id``, as the whole answer lists them.

Gemini's OpenAI-compatible endpoint streams parallel calls one per chunk, each whole, with its own ``id``
and no ``tool_calls[].index``. The stream read each delta by its place in its chunk (always 0), so
the calls were folded into one: the first id, the names joined (``get_weatherget_time``), the arguments
concatenated. An index-less delta that brings a new ``id`` after the call in its place already has one
and a name now starts the next call; index-less deltas that continue one call (the id repeated, or
none) still build that call. The streamed calls equal the non-streamed answer's.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from fault_server import FaultServer, Reply, Stream

from modules import OnlineChatModule
from modules.online.retry import RetryPolicy


def call(ident: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def event(*deltas: dict[str, Any], finish: str | None = None) -> bytes:
    delta: dict[str, Any] = {"role": "assistant", "tool_calls": list(deltas)} if deltas else {}
    chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def whole(calls: list[dict[str, Any]]) -> dict[str, Any]:
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    return {"id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


WEATHER = call("function-call-1", "get_weather", {"city": "Paris"})
TIME = call("function-call-2", "get_time", {"tz": "UTC"})
LONDON = call("function-call-3", "get_weather", {"city": "London"})
END = [event(finish="tool_calls"), b"data: [DONE]\n\n"]


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


def streamed_and_whole(server: FaultServer, events: list[bytes], calls: list[dict[str, Any]]) -> tuple[Any, ...]:
    server.script[:] = [Stream(events), Reply(200, whole(calls)), Stream(events)]
    m = OnlineChatModule(
        source="openai-compatible", base_url=server.base_url, model="gemini-2.5-flash", api_key="AIza-test",
        retry=RetryPolicy(max_retries=0),
    )  # fmt: skip
    with m.stream("Weather and time?") as stream:
        "".join(stream)
    answer = m.respond("Weather and time?")

    async def drain() -> Any:
        pieces = m.astream("Weather and time?")
        async for _ in pieces:
            pass
        return pieces.tool_calls

    async_calls = asyncio.run(drain())
    m.close()
    return tuple(stream.tool_calls), tuple(answer.tool_calls), tuple(async_calls)


@pytest.mark.parametrize(
    ("events", "calls"),
    [
        ([event(WEATHER), event(TIME), *END], [WEATHER, TIME]),
        ([event(WEATHER), event(LONDON), *END], [WEATHER, LONDON]),  # one function, called twice
        ([event(WEATHER, TIME), event(LONDON), *END], [WEATHER, TIME, LONDON]),  # two in one chunk, then one
        ([event(WEATHER), event(TIME, LONDON), *END], [WEATHER, TIME, LONDON]),  # one, then two in one chunk
        ([event({**WEATHER, "index": None}), event({**TIME, "index": None}), *END], [WEATHER, TIME]),  # null
    ],
    ids=["one-per-chunk", "same-function-twice", "two-then-one", "one-then-two", "null-index"],
)
def test_index_less_whole_calls_with_their_own_ids_stay_apart(server, events, calls):
    streamed, answered, streamed_async = streamed_and_whole(server, events, calls)
    assert list(streamed) == calls
    assert streamed == answered == streamed_async


def test_index_less_pieces_of_one_call_still_build_that_call(server):
    args = json.dumps({"city": "Paris"})
    repeated = [  # the id in every delta (some providers repeat it)
        event({"id": "call-1", "type": "function", "function": {"name": "get_weather", "arguments": args[:5]}}),
        event({"id": "call-1", "function": {"arguments": args[5:]}}),
    ]
    once = [  # the id and name in the first delta only
        event({"id": "call-1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}),
        event({"function": {"arguments": args[:5]}}),
        event({"function": {"arguments": args[5:]}}),
    ]
    expected = [call("call-1", "get_weather", {"city": "Paris"})]
    for events in (repeated, once):
        streamed, answered, streamed_async = streamed_and_whole(server, [*events, *END], expected)
        assert list(streamed) == expected
        assert streamed == answered == streamed_async
