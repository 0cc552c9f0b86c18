"""Threat: slowloris before the body. A connection that sends half a request head, or nothing, is held forever.

The body's read limit starts once the headers are in, and uvicorn sets no limit on the head: a client
could open any number of connections, each with an unfinished header block or none, and keep them
without ever reaching the admission that answers 429. The head now has
:data:`~modules.server.protocol.HEAD_READ_TIMEOUT_S` to arrive (shortened here), after which the client
gets a 408 in OpenAI's envelope and the connection closes; a request sent whole is answered as before,
and a keep-alive connection times its next head from that head's first byte.

The socket timeouts are hang detectors (seconds for work of well under one), not timings.
"""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlparse

import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.server import protocol

HEAD = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


def answer(sock: socket.socket) -> bytes:
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


def one_response(sock: socket.socket) -> bytes:
    """One whole response off a keep-alive connection (by its Content-Length)."""
    got = b""
    while b"\r\n\r\n" not in got:
        got += sock.recv(65536)
    head, _, body = got.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def connect(module: Any) -> socket.socket:
    url = urlparse(module.url)
    return socket.create_connection((url.hostname, url.port), timeout=30)


@pytest.mark.parametrize(
    "sent", [b"", HEAD, b"GET /health HTT"], ids=["nothing", "headers-without-their-end", "half-a-request-line"]
)
def test_an_unfinished_head_gets_a_408_envelope_and_the_connection_closes(
    served_module: Any, sent: bytes, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setattr(protocol, "HEAD_READ_TIMEOUT_S", 0.5, raising=False)
    with connect(served_module) as sock:
        sock.sendall(sent)
        got = answer(sock)  # the server closes: recv returns b"" (a hang would hit the 30 s socket timeout)
    status, _, body = got.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 408")
    error = json.loads(body)["error"]
    assert error["code"] == "request_timeout" and "headers did not arrive" in error["message"]


def test_a_whole_request_and_the_next_on_its_connection_are_answered(
    served_module: Any, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setattr(protocol, "HEAD_READ_TIMEOUT_S", 0.5, raising=False)
    request = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with connect(served_module) as sock:
        for _ in range(2):  # the second head is timed from its own first byte, not from the connection's start
            sock.sendall(request)
            got = one_response(sock)
            assert got.startswith(b"HTTP/1.1 200"), got[:100]
        sock.sendall(b"GET /health HTTP/1.1\r\n")  # a third head, left unfinished after two answers
        rest = answer(sock)
    assert rest.startswith(b"HTTP/1.1 408")
