"""A read timeout while a whole answer's body is read is an :class:`APITimeoutError`, as before its headers.

``requests`` re-wraps urllib3's ``ReadTimeoutError``, raised while ``iter_content`` reads a body, in a
plain ``requests.ConnectionError``: a server that sent its headers and part of the body, then went
quiet past the read timeout, surfaced as :class:`APIConnectionError` ("Connection error"), on every
source. It is a timeout (``APITimeoutError``, a ``TimeoutError``), for a whole answer and for a stream
answered as one JSON body; retried exactly as before (a timeout is a connection error), and a refused
connection is still a plain connection error.
"""

from __future__ import annotations

import socket

import pytest
from fault_server import Drip, FaultServer

from modules import OnlineChatModule
from modules.errors import APIConnectionError, APITimeoutError
from modules.online.config import Timeout
from modules.online.retry import RetryPolicy

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
SOURCES = {"openai": "/v1", "anthropic": "", "gemini": "", "ollama": ""}


def half_a_body() -> Drip:
    """The headers and 5 of the 100 bytes promised, then silence (1 s) well past the read timeout."""
    data = HEAD + b'{"cho'
    return Drip(data, every=1.0, size=1, fast=len(data) - 1)


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


def module(server: FaultServer, source: str, retries: int, waits: list[float]) -> OnlineChatModule:
    root = server.base_url.removesuffix("/v1")
    return OnlineChatModule(
        source, model="m", base_url=root + SOURCES[source], api_key="sk-test-key-123456",
        timeout=Timeout(connect=5, read=0.2, total=60), retry=RetryPolicy(retries, sleep=waits.append),
    )  # fmt: skip


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "stream-answered-as-json"])
def test_a_body_that_stops_coming_is_a_timeout(server, source, streamed):
    server.script[:] = [half_a_body()]
    waits: list[float] = []
    m = module(server, source, 0, waits)
    with pytest.raises(APITimeoutError, match="timed out") as caught:
        if streamed:
            list(m.stream("hi"))
        else:
            m("hi")
    m.close()
    assert isinstance(caught.value, TimeoutError)
    assert "Connection error" not in str(caught.value)


@pytest.mark.parametrize("source", SOURCES)
def test_the_timeout_is_retried_as_before(server, source):
    server.script[:] = [half_a_body(), half_a_body()]
    before = server.attempts
    waits: list[float] = []
    m = module(server, source, 1, waits)
    with pytest.raises(APITimeoutError):
        m("hi")
    m.close()
    assert server.attempts - before == 2 and len(waits) == 1


def test_a_refused_connection_is_still_a_connection_error():
    with socket.socket() as sock:  # a port nothing listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        m = OnlineChatModule(
            base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key="sk-test", retry=RetryPolicy(max_retries=0)
        )
        with pytest.raises(APIConnectionError) as caught:
            m("hi")
        m.close()
    assert not isinstance(caught.value, APITimeoutError)
