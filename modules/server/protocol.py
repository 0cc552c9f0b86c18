"""uvicorn's HTTP/1.1 protocol, answering a request it cannot parse in OpenAI's error envelope.

A request line, header or framing that h11 rejects (``Content-Length: abc``, no
``Host`` header, a header block over
:data:`~modules.server.lifecycle.MAX_REQUEST_HEAD_BYTES`, a ``Transfer-Encoding``
other than chunked) never reaches the app: uvicorn answers it itself, in plain
text (``Invalid HTTP request received.``). Here that answer is the same
``{"error": {...}}`` JSON as every other error, with h11's reason in words: 400,
or 431 for a header block too large. The connection still closes afterwards, as
it must once the framing is unknown.

h11 itself lets two ambiguous framings through, and both are request-smuggling
vectors (RFC 9112 §6.1): a request with both ``Content-Length`` and
``Transfer-Encoding`` (h11 reads it chunked and keeps the connection open, so a
proxy that trusted the length would see the next request where we see body),
and ``Transfer-Encoding`` on HTTP/1.0 (framing the RFC says to treat as faulty).
Both get the same 400 envelope and the connection is closed.

The class is always the one used (never ``httptools``, which uvicorn picks where
it is installed), so the limits and answers are the same on every install.
"""

from __future__ import annotations

import asyncio
import json
import sys
from http import HTTPStatus
from typing import Any

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from modules.server.errors import HTTPError

__all__ = ["HEAD_READ_TIMEOUT_S", "EnvelopeH11Protocol", "ambiguous_framing", "protocol_error"]

HEAD_READ_TIMEOUT_S = 30.0
"""The longest a request's line and headers may take to arrive, from the connection's first byte or the first
byte after the previous answer (as nginx's ``client_header_timeout``): past it the client gets a 408 and the
connection closes. The body's own limit (:data:`~modules.server.body_limit.BODY_READ_TIMEOUT_S`) starts only
once the headers are in; before this, a connection that sent half a header block, or nothing, was held for
as long as the client liked (slowloris), never reaching the admission that answers 429."""


def protocol_error(exc: BaseException | None) -> HTTPError:
    """The envelope for a request h11 refused with *exc* (its ``RemoteProtocolError``, if known)."""
    reason = str(exc)[:200] if exc is not None else ""
    hint = getattr(exc, "error_status_hint", 400)
    status = 431 if hint == 431 else 400  # h11 says 501 for an unknown Transfer-Encoding: the client's fault
    if status == 431:
        message = "the request line and headers are too large for this server"
    else:
        message = "the request is not valid HTTP/1.1" + (f": {reason}" if reason else "")
    return HTTPError(status, message)


def ambiguous_framing(request: h11.Request) -> str | None:
    """Why *request*'s body framing is one a server must not trust (RFC 9112 §6.1), or None."""
    names = {name for name, _ in request.headers}  # h11 gives them lower-cased
    if b"transfer-encoding" not in names:
        return None
    if b"content-length" in names:
        return "both Content-Length and Transfer-Encoding are set; send only one"
    if request.http_version == b"1.0":
        return "Transfer-Encoding is not allowed on HTTP/1.0; send Content-Length"
    return None


class _FramingCheckedConnection(h11.Connection):
    """An h11 server connection that refuses a request whose framing is ambiguous, as h11 refuses bad framing."""

    def next_event(self) -> Any:
        event = super().next_event()
        if isinstance(event, h11.Request):
            reason = ambiguous_framing(event)
            if reason is not None:
                raise h11.RemoteProtocolError(reason, error_status_hint=400)
        return event


class EnvelopeH11Protocol(H11Protocol):
    """:class:`H11Protocol` whose answer to an unparsable or ambiguously framed request is OpenAI's error envelope."""

    def __init__(self, config: Config, server_state: ServerState, app_state: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(config, server_state, app_state, **kwargs)
        size = config.h11_max_incomplete_event_size  # as uvicorn builds its connection; None: h11's default
        conn = _FramingCheckedConnection
        self.conn = conn(h11.SERVER) if size is None else conn(h11.SERVER, size)

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = None
        self._time_the_head()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            self._time_the_head()  # a head begun (after an answer: the keep-alive timer was cancelled by it)
        elif self._head_timer is not None:
            self._head_timer.cancel()  # the request line and headers are in
            self._head_timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        super().connection_lost(exc)

    def _time_the_head(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(HEAD_READ_TIMEOUT_S, self._head_too_slow)

    def _head_too_slow(self) -> None:
        """408 and close: the request line and headers did not arrive in :data:`HEAD_READ_TIMEOUT_S`."""
        self._head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        err = HTTPError(
            408,
            f"the request line and headers did not arrive within {HEAD_READ_TIMEOUT_S:g} s; send the whole "
            "request without pausing",
            code="request_timeout",
        )
        body = json.dumps(err.body()).encode("ascii")
        head = (
            b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
            + f"content-length: {len(body)}\r\n".encode()
            + b"connection: close\r\n\r\n"
        )
        self.transport.write(head + body)
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        # uvicorn calls this from inside its ``except h11.RemoteProtocolError`` block, without the
        # exception: it is the one being handled.
        handled = sys.exc_info()[1]
        err = protocol_error(handled if isinstance(handled, h11.RemoteProtocolError) else None)
        body = json.dumps(err.body()).encode("ascii")
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        reason = HTTPStatus(err.status).phrase.encode()
        for event in (h11.Response(status_code=err.status, headers=headers, reason=reason), h11.Data(data=body)):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.write(self.conn.send(h11.EndOfMessage()) or b"")
        self.transport.close()
