"""A fault-injecting OpenAI-compatible server for the online module's tests.

Each request received takes the next action from ``server.script`` (a
list); when the script is empty the server answers a normal completion.
Actions misbehave the way real providers and networks do:

- :class:`Reply`: any status, body and headers (``Retry-After``,
  ``x-should-retry``, ``x-request-id``...), optionally after a delay;
- :class:`Stream`: SSE bytes written in the given pieces (chunked transfer
  encoding, or a body delimited by closing the connection), optionally cut
  before the end;
- :class:`Raw`: any bytes at all (a truncated or malformed answer), then close;
- :class:`Drop`: close the connection without answering;
- :class:`Hang`: say nothing for a while (a read timeout on the client);
- :class:`Drip`: write a whole answer (status line included) a few bytes at a
  time, slowly, so that no single read times out (the total deadline must).

Every request is recorded (method, path, lower-cased headers, body) so tests
can check what the client actually sent, and the server counts the client
connections still open, for leak checks. It is built on
:class:`modules.testing.LoopbackServer` (raw sockets, HTTP/1.1 keep-alive).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from modules.testing import LoopbackServer, RecordedRequest, sse_chunks, write_response


def completion(text: str = "ok", tool_calls: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """A chat.completion body answering ``text`` (and ``tool_calls``)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }


def sse_events(text: str = "Hello there, world!", tool_calls: Sequence[Mapping[str, Any]] = ()) -> list[bytes]:
    """The SSE events a provider sends for ``text``: role, one per word, finish, ``[DONE]``."""
    return sse_chunks("chatcmpl-test", "test-model", {"content": text, "tool_calls": list(tool_calls)})


def error_body(message: str, type_: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": None}}


@dataclass
class Reply:
    """Answer ``status`` with ``body`` (JSON value, str or bytes; default: a completion) and ``headers``."""

    status: int = 200
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Stream:
    """Answer 200 with an event stream written as ``pieces``.

    ``chunked``: HTTP chunked encoding (else the body ends when the server
    closes). ``cut``: stop after the pieces without ending the body properly
    (no terminating chunk; the connection is closed). ``delay``: seconds
    between pieces; ``hang_after``: seconds of silence after the pieces.
    """

    pieces: Sequence[bytes]
    chunked: bool = True
    cut: bool = False
    delay: float = 0.0
    hang_after: float = 0.0
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Raw:
    """Write these bytes as the whole answer (status line included), then close the connection."""

    data: bytes


@dataclass
class Drop:
    """Close the connection without answering."""


@dataclass
class Hang:
    """Say nothing for ``seconds``, then close the connection."""

    seconds: float = 1.0


@dataclass
class Drip:
    """Write ``data`` (the whole answer, status line included) ``size`` bytes every ``every`` seconds, then close.

    ``fast``: how many leading bytes are sent at once (e.g. the status line and headers).
    ``sent`` counts the bytes written before the client hung up (or all of them).
    """

    data: bytes
    every: float = 0.1
    size: int = 1
    sent: int = 0
    fast: int = 0


Action = Reply | Stream | Raw | Drop | Hang | Drip


class FaultServer:
    """Start with ``with FaultServer() as server:``; script it with ``server.script.extend([...])``."""

    def __init__(self) -> None:
        self.script: list[Action] = []
        self._lock = threading.Lock()
        self._server = LoopbackServer(self._handle)
        self.base_url = self._server.base_url

    def __enter__(self) -> FaultServer:
        self._server.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.stop()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order."""
        return self._server.requests

    @property
    def attempts(self) -> int:
        """How many requests reached the server."""
        return len(self._server.requests)

    @property
    def open_connections(self) -> int:
        return self._server.open_connections

    @property
    def total_connections(self) -> int:
        return self._server.total_connections

    def wait_until_closed(self, timeout: float = 5.0, at_most: int = 0) -> int:
        return self._server.wait_until_closed(timeout, at_most)

    def _next(self) -> Action:
        with self._lock:
            return self.script.pop(0) if self.script else Reply()

    def _handle(self, request: RecordedRequest, sock: socket.socket) -> bool:
        action = self._next()
        if isinstance(action, Drop):
            return False
        if isinstance(action, Raw):
            sock.sendall(action.data)
            return False
        if isinstance(action, Hang):
            time.sleep(action.seconds)
            return False
        if isinstance(action, Drip):
            _drip(sock, action)
            return False
        if isinstance(action, Reply):
            if action.delay:
                time.sleep(action.delay)
            body = completion() if action.body is None else action.body
            headers = dict(action.headers)
            if isinstance(body, (bytes, str)) and "Content-Type" not in headers:
                headers["Content-Type"] = "text/plain"
            write_response(sock, action.status, body, headers)
            return True
        return _write_stream(sock, action)


def _write_stream(sock: socket.socket, action: Stream) -> bool:
    head = [f"HTTP/1.1 {action.status} OK", "Content-Type: text/event-stream", "Cache-Control: no-cache"]
    head.append("Transfer-Encoding: chunked" if action.chunked else "Connection: close")
    head += [f"{k}: {v}" for k, v in action.headers.items()]
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    for piece in action.pieces:
        if action.delay:
            time.sleep(action.delay)
        if not piece:
            continue
        sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if action.chunked else piece)
    if action.hang_after:
        time.sleep(action.hang_after)
    if action.cut or not action.chunked:
        return False  # closing the connection ends (or cuts) the body
    sock.sendall(b"0\r\n\r\n")
    return True


def _drip(sock: socket.socket, action: Drip) -> None:
    sock.sendall(action.data[: action.fast])
    action.sent = action.fast
    for start in range(action.fast, len(action.data), action.size):
        piece = action.data[start : start + action.size]
        try:
            sock.sendall(piece)
        except OSError:
            return  # the client hung up
        action.sent += len(piece)
        time.sleep(action.every)


def http_answer(
    body: bytes,
    content_type: str = "application/json",
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    chunked: bool = False,
) -> bytes:
    """The bytes of a whole HTTP/1.1 answer (for :class:`Raw` and :class:`Drip`)."""
    head = [f"HTTP/1.1 {status} X", f"Content-Type: {content_type}"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if chunked:
        head.append("Transfer-Encoding: chunked")
        body = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in [body[i : i + 7] for i in range(0, len(body), 7)])
        body += b"0\r\n\r\n"
    else:
        head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


def split_at(data: bytes, cuts: Sequence[int]) -> list[bytes]:
    """``data`` split at the given offsets (sorted, deduplicated, in range)."""
    points = sorted({c for c in cuts if 0 < c < len(data)})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in zip(edges, edges[1:])]


class FakeClock:
    """A clock and a sleep for the retry policy: ``sleep`` records the wait and advances ``now``."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def dumps(value: Any) -> bytes:
    return json.dumps(value).encode()
