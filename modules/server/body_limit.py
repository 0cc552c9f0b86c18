"""The body limit, as ASGI middleware: 413 over the limit, and 400s in words for bodies that are not JSON."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any

from anyio import to_thread
from fastapi import Request, Response
from fastapi.routing import APIRoute

from modules.server.errors import HTTPError
from modules.server.json_body import JSONProblem, lone_surrogate, strict_loads

__all__ = [
    "INLINE_BYTES",
    "MAX_BODY_BYTES",
    "PARSED",
    "SMALL",
    "BodyLimit",
    "ParsedOnceRoute",
    "body_problem",
    "send_error",
]

MAX_BODY_BYTES = 2 * 1024 * 1024

INLINE_BYTES = 65536
"""Bodies below this are parsed, and their prompts rendered and tokenized, on the event loop itself:
a worker thread's handoff costs more than the work (about 0.1 ms); larger ones go to a thread."""

SMALL = "prompter.small_body"
"""The scope key set to True when the POST body was below :data:`INLINE_BYTES`."""


CLOSING_POLL_S = 0.1
"""While a body is still arriving, how often :class:`BodyLimit` looks whether the server is stopping."""

BODY_READ_TIMEOUT_S = 60.0
"""The longest a request body may pause between two of its pieces (as nginx's ``client_body_timeout``):
past it the client gets a 408 and the connection closes. Without it a stalled upload (a chunk announced
and never sent) held its connection and coroutine until the client chose to leave."""

_STALLED = object()


class BodyLimit:
    """ASGI middleware: 413 for a body over ``max_bytes`` (by Content-Length or as it streams in).

    A body still arriving when the server stops (*closing* turns true) is answered 503
    ``server_shutting_down`` at once, as a request waiting to run is: without it, ``stop()``
    waited out uvicorn's graceful timeout for a client that had sent half a body, which then
    got uvicorn's plain-text 500. A body that pauses longer than *read_timeout* seconds (default
    :data:`BODY_READ_TIMEOUT_S`) between two pieces is answered 408 ``request_timeout``.
    """

    def __init__(
        self, app: Any, max_bytes: int, closing: Callable[[], bool] = lambda: False, read_timeout: float | None = None
    ) -> None:
        self.app, self.max_bytes, self.closing = app, max_bytes, closing
        self.read_timeout = BODY_READ_TIMEOUT_S if read_timeout is None else read_timeout

    async def _next(self, receive: Any) -> Any:
        """The next ASGI message; None once the server is stopping, :data:`_STALLED` past the read timeout."""
        if self.closing():
            return None
        task = asyncio.ensure_future(receive())
        deadline = asyncio.get_running_loop().time() + self.read_timeout
        try:
            while True:
                left = deadline - asyncio.get_running_loop().time()
                done, _ = await asyncio.wait({task}, timeout=max(0.0, min(CLOSING_POLL_S, left)))
                if done:
                    return task.result()
                if self.closing():
                    return None
                if left <= CLOSING_POLL_S:
                    return _STALLED
        finally:
            if not task.done():
                task.cancel()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_big = HTTPError(413, f"request body over the limit of {self.max_bytes} bytes", code="request_too_large")
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    if int(value) > self.max_bytes:
                        await send_error(send, too_big)
                        return
                except ValueError:
                    await send_error(send, HTTPError(400, "invalid Content-Length header"))
                    return
        # Read the whole body first (at most max_bytes), so that a chunked upload over the limit
        # is a clean 413 before the app sees anything; then replay it to the app.
        chunks: list[bytes] = []
        seen = 0
        more = True
        while more:
            message = await self._next(receive)
            if message is None:
                stopping = "the server is shutting down (the request body had not all arrived)"
                await send_error(send, HTTPError(503, stopping, type="server_error", code="server_shutting_down"))
                return
            if message is _STALLED:
                stalled = (
                    f"the request body stopped arriving (nothing for {self.read_timeout:g} s, {seen} bytes in); "
                    "send the whole body without pausing"
                )
                await send_error(send, HTTPError(408, stalled, code="request_timeout", headers={"Connection": "close"}))
                return
            if message["type"] != "http.request":  # the client left while uploading
                return
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_bytes:
                await send_error(send, too_big)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        if scope.get("method") == "POST" and str(scope.get("path", "")).endswith("/completions"):
            whole = b"".join(chunks)
            # A large body takes a while to parse strictly: off the event loop, which serves everyone.
            scope[SMALL] = len(whole) < INLINE_BYTES
            problem = (
                body_problem(scope, whole) if scope[SMALL] else await to_thread.run_sync(body_problem, scope, whole)
            )
            if problem is not None:
                await send_error(send, problem)
                return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()  # afterwards: http.disconnect, which stops a stream

        await self.app(scope, replay, send)


def body_problem(scope: Any, body: bytes) -> HTTPError | None:
    """The 400 for a POST body that is not JSON (wrong Content-Type, empty, malformed), else None
    (a 415 for a compressed body: ``Content-Encoding`` other than ``identity``).

    Checked before FastAPI reads the body, so the message says what is wrong in
    words (pydantic's would be "Input should be a valid dictionary" or a byte offset).
    """
    content_type: str | None = None
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            said = value.decode("latin-1")
            if content_type is not None and said != content_type:
                # one field (RFC 9110 section 8.3): we would read one of the two and FastAPI the other
                return HTTPError(
                    400,
                    f"two Content-Type headers that differ ({content_type[:60]!r} and {said[:60]!r}); "
                    "send one, application/json",
                )
            content_type = said
        elif name == b"content-encoding" and value.strip().lower() not in (b"", b"identity"):
            # a compressed body read as JSON would be a 400 about bad UTF-8 or syntax, naming the wrong fault
            coding = value.decode("latin-1")[:40]
            return HTTPError(415, f"Content-Encoding {coding!r} is not supported; send the JSON body uncompressed")
    content_type = content_type or ""
    media = content_type.split(";", 1)[0].strip().lower()
    if not media:
        return HTTPError(400, "Content-Type must be application/json; the request sent none")
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        return HTTPError(400, f"Content-Type must be application/json, got {media!r}")
    charset = next(
        (
            p.split("=", 1)[1].strip().strip('"').lower()
            for p in content_type.split(";")[1:]
            if p.strip().lower().startswith("charset=")
        ),
        "utf-8",
    )
    if charset not in ("utf-8", "utf8"):
        return HTTPError(400, f"Content-Type charset must be utf-8 (JSON is UTF-8 text), got {charset[:40]!r}")
    if not body.strip():
        return HTTPError(400, "request body is empty; expected a JSON object")
    try:
        value = strict_loads(body)
    except JSONProblem as exc:
        return HTTPError(400, str(exc))
    if not isinstance(value, dict):
        kinds = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
        return HTTPError(400, f"the request body must be a JSON object, got {kinds.get(type(value), 'null')}")
    lone = lone_surrogate(body, value)
    if lone is not None:
        return HTTPError(400, lone[1], param=lone[0] or None)
    scope[PARSED] = value  # FastAPI reads it from here (ParsedOnceRoute) instead of parsing the body again
    return None


PARSED = "prompter.parsed_json"
"""The scope key holding the body's strict parse, set by :func:`body_problem`."""


class ParsedOnceRoute(APIRoute):
    """A FastAPI route whose ``request.json()`` is the strict parse :class:`BodyLimit` already made."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            if PARSED in request.scope:
                request._json = request.scope[PARSED]  # Starlette's own cache of request.json()
            return await handler(request)

        return route


async def send_error(send: Any, err: HTTPError) -> None:
    body = json.dumps(err.body()).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in err.headers.items()]
    await send({"type": "http.response.start", "status": err.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
