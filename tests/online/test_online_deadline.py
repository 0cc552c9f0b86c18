"""Threat: a server that keeps a call alive forever by answering slowly, a byte at a time.

No single read ever waits long enough to hit the read timeout, so only the total deadline
(``Timeout(total=...)``) can end the call. It must, on every read path: the status line and
headers, a plain JSON body, a chunked body, an SSE stream, a JSON answer to a stream request,
an error body, and the retries and ``Retry-After`` waits between attempts.

No timing is asserted: each test checks that the call raised ``APITimeoutError`` while the
server still had most of its answer to send (it had not finished dripping when the client
hung up), i.e. the client gave up at the deadline, not at the end of the answer.
"""

from __future__ import annotations

import json

import pytest
from fault_server import Drip, FaultServer, Reply, completion, http_answer, sse_events

from modules import OnlineChatModule
from modules.errors import APITimeoutError, RateLimitError, StreamInterruptedError
from modules.online.module import Timeout
from modules.online.retry import RetryPolicy

KEY = "sk-test-0123456789abcdef"
TOTAL = 1.0
EVERY = 0.1
LONG = "x" * 60  # 60 bytes dripped at 0.1 s: 6 s, far past the 1 s deadline


@pytest.fixture
def server():
    with FaultServer() as srv:
        yield srv


def make(server: FaultServer, sleeps: list[float] | None = None, **kw) -> OnlineChatModule:
    sleep = None if sleeps is None else sleeps.append
    policy = RetryPolicy(random=lambda: 0.0) if sleep is None else RetryPolicy(random=lambda: 0.0, sleep=sleep)
    kw.setdefault("timeout", Timeout(connect=1, read=5, total=TOTAL))
    return OnlineChatModule(base_url=server.base_url, model="m", api_key=KEY, retry=policy, **kw)


def plain_answer(chunked: bool = False) -> bytes:
    return http_answer(json.dumps(completion(LONG)).encode(), chunked=chunked)


def sse_answer() -> bytes:
    return http_answer(b"".join(sse_events(" ".join([LONG] * 3))), "text/event-stream", chunked=True)


def gave_up_early(drip: Drip) -> bool:
    """The client hung up while at least half the dripped part of the answer was still unsent."""
    return drip.sent - drip.fast < (len(drip.data) - drip.fast) // 2


DRIPS = [
    pytest.param(lambda: plain_answer(), False, id="plain-json-body"),
    pytest.param(lambda: plain_answer(chunked=True), False, id="chunked-json-body"),
    pytest.param(lambda: plain_answer(), True, id="json-answer-to-a-stream-request"),
    pytest.param(lambda: sse_answer(), True, id="sse-stream"),
    pytest.param(
        lambda: http_answer(b"{}", headers={f"x-pad-{i}": "p" * 5 for i in range(10)}),
        False,
        id="status-line-and-headers",
    ),  # fmt: skip
]


@pytest.mark.parametrize(("answer", "stream"), DRIPS)
def test_a_dripping_server_cannot_hold_a_call_past_the_total_deadline(server, answer, stream):
    drip = Drip(answer(), every=EVERY)
    server.script.append(drip)
    m = make(server, max_retries=0)
    with pytest.raises(APITimeoutError, match="deadline"):
        if stream:
            list(m.stream("hi"))
        else:
            m("hi")
    assert gave_up_early(drip), (drip.sent, len(drip.data))


def test_a_stream_past_the_deadline_keeps_its_partial_text_and_is_also_an_interruption(server):
    body = b"".join(sse_events("one two three four five six seven eight"))
    drip = Drip(http_answer(body, "text/event-stream", chunked=True), every=0.02, size=3)
    server.script.append(drip)
    with pytest.raises(APITimeoutError) as info:
        list(make(server, max_retries=0, timeout=Timeout(connect=1, read=5, total=0.6)).stream("hi"))
    assert isinstance(info.value, StreamInterruptedError)
    assert isinstance(info.value.partial_text, str)
    assert gave_up_early(drip)


def test_a_dripped_error_body_is_bounded_by_the_deadline_too(server):
    error = json.dumps({"error": {"message": "busy " + LONG}}).encode()
    drip = Drip(http_answer(error, status=500), every=EVERY)
    server.script.append(drip)
    with pytest.raises(APITimeoutError, match="deadline"):
        make(server)("hi")
    assert gave_up_early(drip) and server.attempts == 1  # the deadline is over: no retry


def test_the_deadline_spans_every_attempt_and_the_waits_between(server):
    """Two fast 500s with short waits, then a drip: the deadline counts from the first attempt."""
    drip = Drip(plain_answer(), every=EVERY)
    server.script += [Reply(500, headers={"Retry-After": "0.3"}), Reply(500, headers={"Retry-After": "0.3"}), drip]
    with pytest.raises(APITimeoutError, match="deadline"):
        make(server, max_retries=2)("hi")
    assert server.attempts == 3
    assert drip.sent < 7  # 1.0 s - 0.6 s of waits leaves about 4 bytes' worth of drip


def test_a_retry_after_longer_than_the_time_left_is_not_slept(server):
    sleeps: list[float] = []
    server.script += [Reply(429, headers={"Retry-After": "30"})]
    with pytest.raises(RateLimitError):
        make(server, sleeps, timeout=Timeout(connect=1, read=5, total=3))("hi")
    assert sleeps == [] and server.attempts == 1


@pytest.mark.parametrize(("answer", "stream"), DRIPS[:4])
def test_with_a_callers_own_session_a_dripped_body_still_ends_at_the_deadline(server, answer, stream):
    """A caller's session keeps its adapters: the headers are not bounded, the body's reads are."""
    import requests

    data = answer()
    drip = Drip(data, every=EVERY, fast=data.index(b"\r\n\r\n") + 4)  # headers at once, then the body drips
    server.script.append(drip)
    with requests.Session() as session:
        m = make(server, max_retries=0, session=session)
        with pytest.raises(APITimeoutError, match="deadline"):
            if stream:
                list(m.stream("hi"))
            else:
                m("hi")
        assert session.adapters["http://"].__class__.__name__ == "HTTPAdapter"  # the caller's session untouched
    assert gave_up_early(drip), (drip.sent, len(drip.data))
