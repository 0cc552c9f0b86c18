"""With ``n=2`` (Gemini's ``candidateCount``) a ``streamGenerateContent`` stream carries the candidates'
pieces interleaved, each candidate named by its ``index`` (0 may be left out, as proto JSON leaves
defaults out). The module reads the first candidate: its text, calls and finish reason only, never
the other candidate's pieces, and the usage of the event where the last candidate finishes; the
same answer as the whole (non-streamed) call and as the async stream."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fault_server import FakeClock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wire.common import Answer, Received, WireServer, json_answer

from modules import OnlineChatModule
from modules.online.config import Timeout
from modules.online.retry import RetryPolicy

USAGE = {"promptTokenCount": 3, "candidatesTokenCount": 8, "totalTokenCount": 11}


def candidate(index: int | None, *parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if index is not None:
        found["index"] = index
    if finish is not None:
        found["finishReason"] = finish
    return found


def event(body: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(body)}\r\n\r\n".encode()


INTERLEAVED = [
    {"candidates": [candidate(None, {"text": "Alpha "})], "responseId": "r-2"},
    {"candidates": [candidate(1, {"text": "Beta "})]},
    {"candidates": [candidate(1, {"text": "two "}), candidate(0, {"text": "one"}, finish="STOP")]},
    {"candidates": [candidate(1, {"text": "and more"}, finish="MAX_TOKENS")], "usageMetadata": USAGE},
]
WHOLE = {
    "candidates": [
        candidate(1, {"text": "Beta two and more"}, finish="MAX_TOKENS"),
        candidate(0, {"text": "Alpha one"}, finish="STOP"),
    ],
    "usageMetadata": USAGE,
    "responseId": "r-2",
}


class TwoCandidates(WireServer):
    def __init__(self, events: list[dict[str, Any]], whole: dict[str, Any]) -> None:
        super().__init__()
        self.events, self.whole = events, whole

    def handle(self, request: Received) -> Answer:
        assert request.body["generationConfig"] == {"candidateCount": 2}
        if ":streamGenerateContent" in request.path:
            return Answer(200, {"Content-Type": "text/event-stream"}, chunks=[event(e) for e in self.events])
        return json_answer(self.whole)


def module(server: WireServer) -> OnlineChatModule:
    return OnlineChatModule("gemini", model="gemini-test", base_url=server.base_url, api_key="AIza-test")


def test_stream_assembles_only_the_first_candidate_and_the_last_usage():
    with TwoCandidates(INTERLEAVED, WHOLE) as server:
        m = module(server)
        with m.stream("hi", n=2) as s:
            pieces = list(s)
        whole = m.respond("hi", n=2)
    assert "".join(pieces) == "Alpha one" == whole.text
    assert s.finish_reason == "stop" == whole.finish_reason
    assert s.response is not None
    assert s.response.usage == whole.usage and s.response.usage is not None
    assert s.response.usage["total_tokens"] == 11


def test_async_stream_equals_the_sync_one():
    async def streamed(m: OnlineChatModule) -> str:
        return "".join([piece async for piece in m.astream("hi", n=2)])

    with TwoCandidates(INTERLEAVED, WHOLE) as server:
        assert asyncio.run(streamed(module(server))) == "Alpha one"


def test_the_other_candidates_function_call_is_not_the_first_ones():
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}
    events = [
        {"candidates": [candidate(1, call)]},
        {"candidates": [candidate(0, {"text": "No tools needed."}, finish="STOP")]},
        {"candidates": [candidate(1, finish="STOP")], "usageMetadata": USAGE},
    ]
    whole = {"candidates": [candidate(0, {"text": "No tools needed."}, finish="STOP"), candidate(1, call, finish="STOP")]}
    with TwoCandidates(events, whole) as server:
        m = module(server)
        with m.stream("hi", n=2) as s:
            text = "".join(s)
        assert s.response is not None and s.response.tool_calls == ()
        assert text == "No tools needed." == m("hi", n=2)
        assert s.finish_reason == "stop"


def test_the_first_candidate_finishing_before_the_others_begin_still_gets_the_last_usage():
    """n=2: candidate 0 is whole in the first event, candidate 1 comes after it, with the usage last.
    The stream ended at candidate 0's finish (nothing had said there were others), missing the usage."""
    events = [
        {"candidates": [candidate(None, {"text": "Alpha one"}, finish="STOP")], "responseId": "r-3"},
        {"candidates": [candidate(1, {"text": "Beta two"})]},
        {"candidates": [candidate(1, {"text": " and more"}, finish="MAX_TOKENS")], "usageMetadata": USAGE},
    ]
    with TwoCandidates(events, WHOLE) as server:
        with module(server).stream("hi", n=2) as s:
            assert "".join(s) == "Alpha one"
        assert s.response is not None and s.response.usage == _whole_usage()
        assert s.finish_reason == "stop"


def test_one_candidate_still_ends_the_stream_at_its_finish():
    events = [
        {"candidates": [candidate(None, {"text": "Alpha one"}, finish="STOP")], "usageMetadata": USAGE},
        {"candidates": [candidate(None, {"text": "never read"})]},
    ]

    class OneCandidate(TwoCandidates):
        def handle(self, request: Received) -> Answer:
            assert "candidateCount" not in request.body.get("generationConfig", {})
            return Answer(200, {"Content-Type": "text/event-stream"}, chunks=[event(e) for e in self.events])

    with OneCandidate(events, WHOLE) as server:
        with module(server).stream("hi") as s:
            assert "".join(s) == "Alpha one"
        assert s.response is not None and s.response.usage == _whole_usage()


def test_the_other_candidate_finishing_first_does_not_end_the_stream():
    events = [
        {"candidates": [candidate(1, {"text": "Beta"}, finish="STOP"), candidate(0, {"text": "Alpha "})]},
        {"candidates": [candidate(0, {"text": "one"}, finish="STOP")], "usageMetadata": USAGE},
    ]
    with TwoCandidates(events, WHOLE) as server:
        with module(server).stream("hi", n=2) as s:
            assert "".join(s) == "Alpha one"
        assert s.response is not None and s.response.usage is not None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_interleaving_of_three_candidates_streams_the_first_ones_text(data: st.DataObject):
    words = st.lists(st.text(alphabet="abc xyz", min_size=1, max_size=4), min_size=1, max_size=4)
    texts = [data.draw(words, label=f"candidate {i}") for i in range(3)]
    queues = [[candidate(i if i or data.draw(st.booleans()) else None, {"text": w}) for w in ws] for i, ws in enumerate(texts)]
    for i, queue in enumerate(queues):
        queue[-1]["finishReason"] = "STOP" if i == 0 else "MAX_TOKENS"
    events: list[dict[str, Any]] = []
    while any(queues):
        ready = [q for q in queues if q]
        take = data.draw(st.lists(st.sampled_from(range(len(ready))), min_size=1, max_size=3, unique=True))
        events.append({"candidates": [ready[t].pop(0) for t in take]})
    events[-1]["usageMetadata"] = USAGE
    with TwoCandidates(events, WHOLE) as server, module(server).stream("hi", n=2) as s:
        assert "".join(s) == "".join(texts[0])
        assert s.finish_reason == "stop" and s.response is not None
    # n=2 was asked for: the stream is read to its last event, whose usage is the whole answer's, even
    # when the first candidate finished before any other candidate's piece came
    assert s.response.usage == _whole_usage()


def _whole_usage() -> dict[str, Any]:
    return {**USAGE, "prompt_tokens": 3, "completion_tokens": 8, "total_tokens": 11}


def test_the_total_deadline_passing_after_the_first_candidate_finished_spoils_nothing():
    clock = FakeClock()
    policy = RetryPolicy(sleep=clock.sleep, clock=clock.clock, random=lambda: 0.0)
    with TwoCandidates(INTERLEAVED, WHOLE) as server:
        m = OnlineChatModule("gemini", model="gemini-test", base_url=server.base_url, api_key="AIza-test",
                             retry=policy, timeout=Timeout(total=10))  # fmt: skip
        pieces = []
        with m.stream("hi", n=2) as s:
            for piece in s:
                pieces.append(piece)
                if s.finish_reason is not None:
                    clock.now += 100  # the deadline passes while the other candidate is still streaming
    assert "".join(pieces) == "Alpha one" and s.finish_reason == "stop"
