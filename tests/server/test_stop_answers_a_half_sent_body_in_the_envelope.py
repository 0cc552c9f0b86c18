"""``stop()`` with a client still sending its body (slowloris, a stalled upload): that client gets the
503 ``server_shutting_down`` envelope, as a request waiting to run does.

Before, the half-read body held ``stop()`` for uvicorn's whole graceful timeout, after which the
client got uvicorn's plain-text ``500 Internal Server Error`` and the log a traceback.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import urlparse

from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.trainable import TrainableModule


def _read_all(sock: socket.socket) -> bytes:
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


def test_a_body_still_arriving_at_stop_gets_503_server_shutting_down(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_new_tokens=2, name="tiny").start(serve=True)
    url = urlparse(module.url)
    stalled = []
    try:
        for head in (
            b"Content-Length: 1000\r\n\r\n",  # declared, never all sent
            b"Transfer-Encoding: chunked\r\n\r\n40\r\n",  # a chunk announced, never sent
        ):
            sock = socket.create_connection((url.hostname, url.port), timeout=30)
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + head
                + b'{"model": "tiny", "messages": '
            )
            stalled.append(sock)
        # the server has taken both requests in (a later request on the loop is answered first)
        health = socket.create_connection((url.hostname, url.port), timeout=30)
        health.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert _read_all(health).startswith(b"HTTP/1.1 200")
        health.close()
    finally:
        module.stop()
    for sock in stalled:
        answer = _read_all(sock)
        sock.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503"), answer[:200]
        assert b"content-type: application/json" in head.lower()
        error = json.loads(body)["error"]
        assert error["code"] == "server_shutting_down" and error["type"] == "server_error"
        assert "shutting down" in error["message"]
