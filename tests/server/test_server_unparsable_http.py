"""HTTP the server cannot even parse (bad framing, no Host, a header block over the limit), over a raw socket.

uvicorn answers these itself, before the app runs; they must still get OpenAI's
error envelope (not uvicorn's plain-text "Invalid HTTP request received."), a
4xx, and the server must go on serving.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.trainable import TrainableModule
from modules.server.lifecycle import MAX_REQUEST_HEAD_BYTES

_BODY = b'{"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}'
_HEAD = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


@pytest.fixture(scope="module")
def server(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    module = TrainableModule(tiny_model_path, name="tiny", max_new_tokens=1).start(serve=True)
    yield module
    module.stop()


def _exchange(module: TrainableModule, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send *raw* on a new connection and read the answer until the server closes it."""
    where = urlsplit(module.url)
    with socket.create_connection((where.hostname, where.port), timeout=30) as sock:
        sock.sendall(raw)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


def _error(status: int, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    assert 400 <= status < 500, (status, body[:300])
    assert headers["content-type"] == "application/json", (headers, body[:300])
    parsed = json.loads(body)
    assert set(parsed) == {"error"} and set(parsed["error"]) == {"message", "type", "param", "code"}, parsed
    assert parsed["error"]["type"] == "invalid_request_error"
    return dict(parsed["error"])


UNPARSABLE = [
    pytest.param(_HEAD + b"Content-Length: abc\r\n\r\n" + _BODY, "Content-Length", id="non-numeric-content-length"),
    pytest.param(_HEAD + b"Content-Length: -5\r\n\r\n" + _BODY, "Content-Length", id="negative-content-length"),
    pytest.param(
        _HEAD + b"Content-Length: %d\r\nContent-Length: 3\r\n\r\n" % len(_BODY) + _BODY,
        "Content-Length",
        id="conflicting-content-lengths",
    ),
    pytest.param(
        b"POST /v1/chat/completions HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        % len(_BODY)
        + _BODY,
        "Host",
        id="no-host-header",
    ),
    pytest.param(b"\x00\x01 not a request line\r\n\r\n", "request line", id="garbage-request-line"),
    pytest.param(b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: y\r\n\r\n", "header", id="illegal-header-line"),
    pytest.param(
        _HEAD + b"Transfer-Encoding: gzip\r\n\r\n" + _BODY, "Transfer-Encoding", id="unsupported-transfer-encoding"
    ),
]


@pytest.mark.parametrize(("raw", "named"), UNPARSABLE)
def test_unparsable_http_gets_the_openai_envelope_naming_the_fault(
    server: TrainableModule, raw: bytes, named: str
) -> None:
    status, headers, body = _exchange(server, raw)
    error = _error(status, headers, body)
    assert status == 400 and named in error["message"], error
    assert headers["connection"] == "close"
    # and the server goes on serving
    ok_status, _, ok_body = _exchange(server, b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert ok_status == 200 and json.loads(ok_body)["data"][0]["id"] == "tiny"


def test_a_header_block_over_the_limit_is_431_in_the_envelope(server: TrainableModule) -> None:
    # exactly past the limit and no further, so the server has read every byte before it answers
    raw = b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * MAX_REQUEST_HEAD_BYTES
    status, headers, body = _exchange(server, raw)
    error = _error(status, headers, body)
    assert status == 431 and "too large" in error["message"], error
