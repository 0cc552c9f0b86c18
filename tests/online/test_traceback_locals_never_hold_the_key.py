"""Threat: a traceback that shows each frame's locals gives the key away.

Error trackers (Sentry's default), ``traceback.TracebackException(capture_locals=True)``,
``pytest --showlocals`` and rich tracebacks print the locals of every frame an exception
passed through. Before, an error from the module passed through frames holding the key
(``_send``: the key and the headers built with it, on a refused redirect or a deadline
reached between hops) and the server's answer as it came, before scrubbing (the attempt's
outcome with its body and headers, the stream's last event, the body of an answer of the
wrong shape), so an echoed key reached the report too. Property: for every way a call fails
here, no local of any frame in the exception's traceback holds the key or its echo.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import pytest
from fault_server import FaultServer, Reply, Stream

from modules import OnlineChatModule
from modules.errors import ModuleError

KEY = "sk-canary-locals-4f9a2c7e1b"
HEADER_SECRET = "hk-canary-header-8d3b6e0f2a"


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


def _call(m: OnlineChatModule) -> Any:
    return m("hi")


def _respond(m: OnlineChatModule) -> Any:
    return m.respond("hi")


def _stream(m: OnlineChatModule) -> Any:
    return list(m.stream("hi"))


ECHO = f"{KEY} {HEADER_SECRET}"
CASES: dict[str, tuple[Callable[[OnlineChatModule], Any], list[Any]]] = {
    "status-error": (_call, [Reply(400, {"error": {"message": ECHO}}, headers={"x-echo": ECHO})]),
    "rate-limit": (_call, [Reply(429, {"error": {"message": ECHO}}, headers={"x-echo": ECHO, "retry-after": "999"})]),
    "refused-redirect": (_call, [Reply(302, "", headers={"Location": "http://127.0.0.2:9/x", "x-echo": ECHO})]),
    "wrong-shape": (_respond, [Reply(200, {"choices": [{"message": ECHO}]})]),
    "not-json": (_respond, [Reply(200, f"not json {ECHO}", headers={"Content-Type": "text/plain"})]),
    "stream-json-error": (_stream, [Reply(200, {"error": {"message": ECHO}})]),
    "stream-error-event": (_stream, [Stream([f'data: {{"error": {{"message": "{ECHO}"}}}}\n\n'.encode()])]),
    "stream-bad-event": (_stream, [Stream([f"data: not json {ECHO}\n\n".encode()])]),
    "stream-cut": (_stream, [Stream([f'data: {{"choices":[{{"index":0,"delta":{{"content":"{ECHO}"}}}}]}}\n\n'.encode()],
                                    cut=True)]),  # fmt: skip
}


@pytest.mark.parametrize("case", sorted(CASES), ids=sorted(CASES))
def test_no_frame_an_error_passed_through_holds_the_key_or_its_echo(server, case: str) -> None:
    server.script[:] = list(CASES[case][1])
    m = OnlineChatModule(
        base_url=server.base_url, model="m", api_key=KEY, headers={"X-Api-Key": HEADER_SECRET}, max_retries=0
    )
    with m, pytest.raises(ModuleError) as info:
        CASES[case][0](m)
    below = list(traceback.walk_tb(info.value.__traceback__))[1:]  # the frames under this test's own
    assert below, "the error came from inside the module"
    held = [
        (frame.f_code.co_name, name)
        for frame, _ in below
        for name, value in frame.f_locals.items()
        if KEY in repr(value) or HEADER_SECRET in repr(value)
    ]
    assert held == []
    shown = "".join(traceback.StackSummary.extract(iter(below), capture_locals=True).format())
    assert KEY not in shown and HEADER_SECRET not in shown
