"""A tiny scripted OpenAI-compatible server on 127.0.0.1, for examples, docs and tests.

It stands in for a real provider so that code using :class:`~modules.OnlineChatModule`
runs offline, exactly as it would against the real API (real HTTP, real
sockets, real SSE):

>>> from modules import OnlineChatModule
>>> with FakeOpenAIServer(replies=["Paris."]) as server:
...     m = OnlineChatModule(base_url=server.base_url, model="fake-model")
...     print(m("Capital of France?"), server.requests[0].json()["messages"][-1])
Paris. {'role': 'user', 'content': 'Capital of France?'}

Replies are consumed in order; each is a str (the answer text), a dict
``{"content": ..., "tool_calls": [tool_call("name", {...}), ...]}``, or a
scripted failure ``{"status": 429, "headers": {"Retry-After": "2"}, "error": "..."}``. When the
script runs out, the server echoes the last user message. A request with
``"stream": true`` is answered as server-sent events, one chunk per word.

:class:`LoopbackServer` underneath is a minimal HTTP/1.1 keep-alive server on
raw sockets (fast, and able to misbehave on purpose); the test suite's
fault-injecting server is built on it.
"""

from __future__ import annotations

import itertools
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FakeOpenAIServer", "LoopbackServer", "RecordedRequest", "tool_call", "write_response"]

_REASONS = {
    200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    408: "Request Timeout", 409: "Conflict", 422: "Unprocessable Entity", 429: "Too Many Requests",
    500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
}  # fmt: skip


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server received it; ``headers`` keys are lower-case."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.body)


#: A handler answers one request on the socket; it returns False to close the connection.
Handler = Callable[[RecordedRequest, socket.socket], bool]


def write_response(
    sock: socket.socket, status: int, body: bytes | str | Any, headers: Mapping[str, str] | None = None
) -> None:
    """Write one complete HTTP/1.1 response (``body`` may be bytes, str, or a JSON-able value)."""
    if not isinstance(body, (bytes, str)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode("utf-8")
    head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", f"Content-Length: {len(body)}"]
    hdrs = {"Content-Type": "application/json", **dict(headers or {})}
    head += [f"{k}: {v}" for k, v in hdrs.items()]
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)


def _read_request(sock: socket.socket, buffer: bytearray) -> RecordedRequest | None:
    while b"\r\n\r\n" not in buffer:
        data = sock.recv(65536)
        if not data:
            return None
        buffer += data
    end = buffer.index(b"\r\n\r\n")
    lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
    del buffer[: end + 4]
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(buffer) < length:
        data = sock.recv(65536)
        if not data:
            return None
        buffer += data
    body = bytes(buffer[:length])
    del buffer[:length]
    return RecordedRequest(method, path, headers, body)


class LoopbackServer:
    """A minimal threaded HTTP/1.1 server on 127.0.0.1 that hands each request to ``handler``.

    Connections are kept alive between requests. ``requests`` records every
    request; ``open_connections`` counts client connections not yet closed
    (leak checks), ``total_connections`` every one accepted.
    """

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[RecordedRequest] = []
        self.open_connections = 0
        self.total_connections = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.port: int = self._listener.getsockname()[1]
        self._clients: set[socket.socket] = set()
        self._thread: threading.Thread | None = None
        self._stopped = False

    @property
    def base_url(self) -> str:
        """The OpenAI-style API root, ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LoopbackServer:
        """Start accepting connections in a daemon thread."""
        self._thread = threading.Thread(target=self._accept_loop, name="loopback-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting and close every client connection."""
        self._stopped = True
        try:
            try:  # wakes the thread blocked in accept(); close() alone does not on Linux
                self._listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._listener.close()
        finally:
            with self._lock:
                clients = list(self._clients)
            for sock in clients:
                _close(sock)
            if self._thread is not None:
                self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def wait_until_closed(self, timeout: float = 5.0, at_most: int = 0) -> int:
        """Wait (up to ``timeout``) until at most ``at_most`` client connections are open; return how many are."""
        end = time.monotonic() + timeout
        while self.open_connections > at_most and time.monotonic() < end:
            time.sleep(0.005)
        return self.open_connections

    def _accept_loop(self) -> None:
        while not self._stopped:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self.open_connections += 1
                self.total_connections += 1
                self._clients.add(sock)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        buffer = bytearray()
        try:
            while True:
                request = _read_request(sock, buffer)
                if request is None:
                    break
                with self._lock:
                    self.requests.append(request)
                if not self.handler(request, sock):
                    break
        except OSError:
            pass
        finally:
            _close(sock)
            with self._lock:
                self._clients.discard(sock)
                self.open_connections -= 1


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


_CALL_IDS = itertools.count(1)


def tool_call(name: str, arguments: Mapping[str, Any], id: str | None = None) -> dict[str, Any]:
    """A tool call for a scripted reply: ``{"content": None, "tool_calls": [tool_call("f", {"x": 1})]}``.

    Without ``id``, each call gets a fresh one (``call_1``, ``call_2``, ...), as an API gives.
    """
    return {
        "id": id or f"call_{next(_CALL_IDS)}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


Reply = str | Mapping[str, Any]


def _last_user_text(body: Mapping[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


@dataclass
class FakeOpenAIServer:
    """An OpenAI-compatible ``/v1/chat/completions`` that answers from a script.

    ``replies`` are used in order (then the last user message is echoed);
    ``requests`` holds what the server received, so tests and docs can show
    exactly what was sent. Use it as a context manager.
    """

    replies: Iterable[Reply] = ()
    model: str = "fake-model"
    _script: Any = field(init=False, repr=False)
    _server: LoopbackServer = field(init=False, repr=False)
    _ids: Any = field(init=False, repr=False, default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self._script = iter(list(self.replies))
        self._lock = threading.Lock()
        self._server = LoopbackServer(self._handle)

    @property
    def base_url(self) -> str:
        """Pass this as ``OnlineChatModule(base_url=...)``."""
        return self._server.base_url

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far."""
        return self._server.requests

    def start(self) -> FakeOpenAIServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _next_reply(self, body: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            reply = next(self._script, None)
        if reply is None:
            return {"content": _last_user_text(body)}
        if isinstance(reply, str):
            return {"content": reply}
        return dict(reply)

    def _handle(self, request: RecordedRequest, sock: socket.socket) -> bool:
        if request.method != "POST" or not request.path.rstrip("/").endswith("/chat/completions"):
            write_response(sock, 404, {"error": {"message": f"no route {request.path}", "type": "not_found"}})
            return True
        try:
            body = request.json()
        except ValueError:
            write_response(sock, 400, {"error": {"message": "body is not JSON", "type": "invalid_request"}})
            return True
        reply = self._next_reply(body)
        ident = f"chatcmpl-{next(self._ids)}"
        status = int(reply.get("status", 200))
        if status >= 400:  # a scripted failure: {"status": 429, "headers": {...}, "error": "slow down"}
            error = {"message": reply.get("error", "scripted error"), "type": "scripted", "code": status}
            write_response(sock, status, {"error": error}, {"x-request-id": f"req_{ident}", **reply.get("headers", {})})
            return True
        if body.get("stream"):
            _write_stream(sock, ident, self.model, reply)
            return True
        calls = list(reply.get("tool_calls") or [])
        message = {"role": "assistant", "content": reply.get("content")}
        if calls:
            message["tool_calls"] = calls
        write_response(
            sock,
            200,
            {
                "id": ident,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", self.model),
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
            {"x-request-id": f"req_{ident}"},
        )
        return True


def sse_chunks(ident: str, model: str, reply: Mapping[str, Any]) -> list[bytes]:
    """The SSE events a provider would send for ``reply``: one per word, tool calls in two deltas each."""

    def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
        chunk = {
            "id": ident,
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + json.dumps(chunk, ensure_ascii=False).encode("utf-8") + b"\n\n"

    out = [event({"role": "assistant", "content": ""})]
    out += [event({"content": piece}) for piece in re.findall(r"\s*\S+\s*|\s+", reply.get("content") or "")]
    calls = list(reply.get("tool_calls") or [])
    for index, call in enumerate(calls):
        args = call["function"]["arguments"]
        half = len(args) // 2
        first = {"index": index, "id": call["id"], "type": "function",
                 "function": {"name": call["function"]["name"], "arguments": args[:half]}}  # fmt: skip
        out.append(event({"tool_calls": [first]}))
        out.append(event({"tool_calls": [{"index": index, "function": {"arguments": args[half:]}}]}))
    out.append(event({}, "tool_calls" if calls else "stop"))
    out.append(b"data: [DONE]\n\n")
    return out


def _write_stream(sock: socket.socket, ident: str, model: str, reply: Mapping[str, Any]) -> None:
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        f"Transfer-Encoding: chunked\r\nx-request-id: req_{ident}\r\n\r\n"
    )
    sock.sendall(head.encode("latin-1"))
    for piece in sse_chunks(ident, model, reply):
        sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
    sock.sendall(b"0\r\n\r\n")
