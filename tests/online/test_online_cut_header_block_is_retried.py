"""An answer whose header block is cut short is retried, as the openai client retries it.

``http.client`` takes the end of the bytes for the end of the header block, so a 200 cut inside
its headers (``Content-Ty``, or after a whole header line) read as a complete answer with an
empty body and raised ``APIResponseValidationError`` ("the answer is not JSON: ''") at once,
with the retries unused. httpx, under the official client, reports the same cut as a protocol
error, which it retries. A 2xx whose close-delimited body is empty is now a connection error,
retried; an empty body the server framed as such (``Content-Length: 0``) is still an invalid
answer, not retried.
"""

from __future__ import annotations

import json

import pytest
from fault_server import FakeClock, FaultServer, Raw, completion

from modules import OnlineChatModule
from modules.errors import APIConnectionError, APIResponseValidationError
from modules.online.retry import RetryPolicy

BODY = json.dumps(completion("complete answer")).encode()
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Request-Id: req_1\r\n"
WHOLE = HEAD + b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


def _module(server: FaultServer, waits: list[float]) -> OnlineChatModule:
    policy = RetryPolicy(sleep=waits.append, clock=FakeClock().clock, random=lambda: 0.0, max_retries=1)
    return OnlineChatModule(base_url=server.base_url, model="m", api_key="sk-test-0123456789abcdef", retry=policy)


@pytest.mark.parametrize("cut", range(len("HTTP/1.1 200 OK\r\n"), len(HEAD) + 1))
def test_a_header_block_cut_at_any_byte_is_retried(server, cut):
    server.script[:] = [Raw(HEAD[:cut]), Raw(WHOLE)]
    waits: list[float] = []
    before = server.attempts
    assert _module(server, waits)("hi") == "complete answer"
    assert server.attempts - before == 2 and waits == [0.5]


def test_a_header_block_cut_every_time_ends_in_a_connection_error(server):
    server.script[:] = [Raw(HEAD)] * 2
    waits: list[float] = []
    with pytest.raises(APIConnectionError, match="before the answer's body"):
        _module(server, waits)("hi")
    assert waits == [0.5]


def test_an_empty_body_framed_by_the_server_is_an_invalid_answer_not_retried(server):
    server.script[:] = [Raw(HEAD + b"Content-Length: 0\r\n\r\n"), Raw(WHOLE)]
    waits: list[float] = []
    before = server.attempts
    with pytest.raises(APIResponseValidationError, match="not JSON"):
        _module(server, waits)("hi")
    assert server.attempts - before == 1 and waits == []
    server.script.clear()
