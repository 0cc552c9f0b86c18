"""A task cancelled inside ``async with m.astream(...)`` (``asyncio.wait_for`` timing out) leaves at once:
its ``__aexit__`` waited for the step still reading on its worker thread, so a silent server held the
cancelled task for up to the read timeout (120 s by default). The connection still closes, once that read ends."""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest

from modules import OnlineChatModule
from modules.testing import LoopbackServer, RecordedRequest


def _piece(text: str) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


class _SilentAfterOnePiece:
    """Streams one piece, then says nothing until ``release`` is set (or 20 s pass), then closes."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.holding = threading.Event()

    def __call__(self, request: RecordedRequest, sock: socket.socket) -> bool:
        piece = _piece("first")
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.holding.set()
        self.release.wait(20)
        self.holding.clear()
        return False  # close: the stream is cut


def test_wait_for_timeout_inside_async_with_astream_returns_while_the_server_is_silent() -> None:
    handler = _SilentAfterOnePiece()
    server = LoopbackServer(handler).start()
    m = OnlineChatModule(base_url=server.base_url, model="m", max_retries=0, timeout=60)
    pieces: list[str] = []

    async def consume() -> None:
        async with m.astream("hi") as stream:
            async for piece in stream:
                pieces.append(piece)

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(consume(), 0.5)

    try:
        asyncio.run(main())
        assert pieces == ["first"]
        assert handler.holding.is_set()  # left while the server still held the stream open
    finally:
        handler.release.set()
        assert server.wait_until_closed() == 0  # the step closed the stream when its read ended
        m.close()
        server.stop()
