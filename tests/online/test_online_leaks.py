"""Threat: failed calls leak connections. After 200 failures of every kind, nothing is left open."""

from __future__ import annotations

import gc
import os

import pytest
from fault_server import Drop, FakeClock, FaultServer, Reply, Stream, error_body, sse_events

from modules import OnlineChatModule
from modules.errors import APIError
from modules.online.retry import RetryPolicy


def open_sockets() -> int:
    """Sockets this process holds open (client and server side alike)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                count += 1
        except OSError:
            pass
    return count


FAILURES = [
    ("500", lambda: Reply(500, error_body("boom"))),
    ("401", lambda: Reply(401, error_body("bad key"))),
    ("429", lambda: Reply(429, error_body("slow"), {"Retry-After": "1"})),
    ("drop", lambda: Drop()),
    ("invalid-json", lambda: Reply(200, "<html>")),
    ("stream-cut", lambda: Stream(sse_events("a b c")[:2], cut=True)),
    ("stream-close-delimited-cut", lambda: Stream(sse_events("a b c")[:2], chunked=False)),
    ("stream-error-event", lambda: Stream([*sse_events("a b")[:2], b'data: {"error": {"message": "x"}}\n\n'])),
    ("stream-abandoned", lambda: Stream(sse_events("a b c d e f"))),
    ("stream-503", lambda: Reply(503)),
]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts sockets through /proc (Linux)")
def test_two_hundred_failed_calls_leak_no_connection():
    before = open_sockets()
    clock = FakeClock()
    with FaultServer() as server:
        m = OnlineChatModule(
            base_url=server.base_url,
            model="m",
            api_key="sk-test-0123456789abcdef",
            max_retries=0,
            retry=RetryPolicy(sleep=clock.sleep, clock=clock.clock),
        )
        errors: list[APIError] = []  # kept, as a caller collecting errors would: their tracebacks
        gc.disable()  # hold frames, which must not hold open connections (nor may the gc close them)
        for i in range(200):
            name, action = FAILURES[i % len(FAILURES)]
            server.script.append(action())
            try:
                if name.startswith("stream"):
                    s = m.stream("hi")
                    if name == "stream-abandoned":
                        next(s)
                        s.close()  # the caller stops reading early
                        errors.append(APIError("abandoned"))
                        continue
                    list(s)
                else:
                    m("hi")
            except APIError as exc:
                errors.append(exc)
        assert len(errors) == 200
        assert server.attempts == 200
        # While the module lives, at most its one keep-alive connection stays open ...
        assert server.wait_until_closed(at_most=1) <= 1
        gc.enable()
        m.close()
        # ... and closing it closes everything: 0 leaked, on either side.
        assert server.wait_until_closed() == 0
    assert open_sockets() <= before
