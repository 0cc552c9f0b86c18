"""The HTTP plumbing shared by the protocol servers: a threaded loopback server, a script of
canned answers served first (faults: 429, 529, cut streams), and a record of what was received."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    """One HTTP answer: a body, or ``chunks`` sent as a chunked stream (``cut``: closed before the end)."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    chunks: Sequence[bytes] | None = None
    cut: bool = False


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    client_port: int = 0


class Rejected(Exception):
    """What the protocol handler raises to answer an error (the provider's status and error body)."""

    def __init__(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(status)
        self.answer = json_answer(body, status, headers)


def json_answer(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Answer:
    return Answer(status, {"Content-Type": "application/json", **dict(headers or {})}, json.dumps(body).encode())


class WireServer:
    """Subclasses implement :meth:`handle`; ``script`` answers are served first, one per request."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.script: list[Answer] = []
        self.rejections: list[Answer] = []
        self.delay = 0.0  # seconds before each answer (a model thinking), for concurrency tests
        self.chunk_delay = 0.0  # seconds between the pieces of a stream
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                headers = {k.lower(): v for k, v in self.headers.items()}
                received = Received(self.command, self.path, headers, body, self.client_address[1])
                outer.received.append(received)
                if outer.delay:
                    time.sleep(outer.delay)
                if outer.script:
                    answer = outer.script.pop(0)
                else:
                    try:
                        answer = outer.handle(received)
                    except Rejected as exc:
                        answer = exc.answer
                        outer.rejections.append(answer)
                try:
                    self._write(answer)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading (it had what it needed, or it gave up): not a server fault

            do_POST = _serve
            do_GET = _serve

            def _write(self, answer: Answer) -> None:
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                if answer.chunks is None:
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in answer.chunks:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                    if outer.chunk_delay:
                        time.sleep(outer.chunk_delay)
                if answer.cut:
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self.wfile.write(b"0\r\n\r\n")
                self.close_connection = True

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def handle(self, request: Received) -> Answer:
        raise NotImplementedError

    def __enter__(self) -> WireServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def split_every(data: bytes, size: int) -> list[bytes]:
    """``data`` in pieces of ``size`` bytes: events and lines arrive split anywhere."""
    return [data[i : i + size] for i in range(0, len(data), size)]
