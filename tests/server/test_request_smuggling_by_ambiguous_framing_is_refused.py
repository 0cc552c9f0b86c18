"""Request smuggling through ambiguous body framing is refused, over a raw socket.

A request with both ``Content-Length`` and ``Transfer-Encoding: chunked`` was read
chunked and its connection kept open, so a request hidden after the chunked body
(which a proxy trusting the length would take for body) was served as a second
request. RFC 9112 §6.1 says to reject such a request or close the connection
after it, and to treat ``Transfer-Encoding`` on HTTP/1.0 as faulty framing. Both
now get the 400 error envelope with ``connection: close``, and nothing after
them on the connection is answered.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.trainable import TrainableModule

_BODY = b'{"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}'
_CHUNKED = b"%x\r\n%s\r\n0\r\n\r\n" % (len(_BODY), _BODY)
_SMUGGLED = b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


@pytest.fixture(scope="module")
def server(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    module = TrainableModule(tiny_model_path, name="tiny", max_new_tokens=1).start(serve=True)
    yield module
    module.stop()


def _answers(module: TrainableModule, raw: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Send *raw* on one connection, read until the server closes it, split into (status, headers, body)."""
    where = urlsplit(module.url)
    with socket.create_connection((where.hostname, where.port), timeout=30) as sock:
        sock.sendall(raw)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    answers = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {n.strip().lower(): v.strip() for n, _, v in (line.partition(":") for line in lines)}
        assert "content-length" in headers, headers  # every answer here is sized, none chunked
        size = int(headers["content-length"])
        answers.append((int(status_line.split()[1]), headers, rest[:size]))
        data = rest[size:]
    return answers


def _post_head(version: bytes, *framing: bytes) -> bytes:
    lines = [b"POST /v1/chat/completions HTTP/" + version, b"Host: 127.0.0.1", b"Content-Type: application/json", *framing]
    return b"\r\n".join(lines) + b"\r\n\r\n"


SMUGGLING = [
    pytest.param(
        _post_head(b"1.1", b"Content-Length: %d" % len(_CHUNKED), b"Transfer-Encoding: chunked"),
        "Content-Length",
        id="content-length-then-chunked",
    ),
    pytest.param(
        _post_head(b"1.1", b"Transfer-Encoding: chunked", b"Content-Length: 4"),
        "Content-Length",
        id="chunked-then-short-content-length",
    ),
    pytest.param(_post_head(b"1.0", b"Transfer-Encoding: chunked"), "HTTP/1.0", id="chunked-on-http-1.0"),
]


@pytest.mark.parametrize(("head", "named"), SMUGGLING)
def test_ambiguous_framing_is_refused_and_a_smuggled_request_is_never_served(
    server: TrainableModule, head: bytes, named: str
) -> None:
    answers = _answers(server, head + _CHUNKED + _SMUGGLED)
    assert len(answers) == 1, [a[0] for a in answers]  # the smuggled GET got no answer
    status, headers, body = answers[0]
    assert status == 400 and headers["connection"] == "close", (status, headers)
    error = json.loads(body)["error"]
    assert error["type"] == "invalid_request_error" and named in error["message"], error


def test_a_plain_chunked_request_still_keeps_its_connection(server: TrainableModule) -> None:
    head = _post_head(b"1.1", b"Transfer-Encoding: chunked")
    statuses = [status for status, _, _ in _answers(server, head + _CHUNKED + _SMUGGLED)]
    assert statuses == [200, 200]
