"""``close()`` while ``acall``s wait for a worker thread: each waiting call raises a ``ModuleConfigError``
saying the module was closed and nothing was sent. They got a bare ``CancelledError`` although no one
cancelled their task, which ``asyncio.gather`` and task groups read as a cancellation of the caller."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading

import pytest

from modules import ModuleConfigError, OnlineChatModule
from modules.testing import LoopbackServer, RecordedRequest, write_response

ANSWER = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Task.cancelling() tells a close from a cancellation")
def test_calls_queued_behind_the_only_worker_fail_typed_when_the_module_closes() -> None:
    release, arrived = threading.Event(), threading.Event()

    def handler(request: RecordedRequest, sock: socket.socket) -> bool:
        arrived.set()
        release.wait(20)
        write_response(sock, 200, ANSWER)
        return False

    server = LoopbackServer(handler).start()
    m = OnlineChatModule(base_url=server.base_url, model="m", async_workers=1, max_retries=0)

    async def main() -> list[object]:
        calls = [asyncio.ensure_future(m.acall(f"q{i}")) for i in range(3)]
        while not arrived.is_set():  # the first call holds the only worker
            await asyncio.sleep(0.01)
        m.close()
        release.set()
        return await asyncio.gather(*calls, return_exceptions=True)

    try:
        first, *queued = asyncio.run(main())
    finally:
        release.set()
        server.stop()
    assert len(queued) == 2
    for outcome in queued:
        assert isinstance(outcome, ModuleConfigError), repr(outcome)
        assert "closed while this call waited for a worker thread; nothing was sent" in str(outcome)
    assert len(server.requests) == 1  # the queued calls sent nothing


def test_a_cancelled_call_waiting_for_a_worker_is_still_a_cancellation() -> None:
    release, arrived = threading.Event(), threading.Event()

    def handler(request: RecordedRequest, sock: socket.socket) -> bool:
        arrived.set()
        release.wait(20)
        write_response(sock, 200, ANSWER)
        return False

    server = LoopbackServer(handler).start()
    m = OnlineChatModule(base_url=server.base_url, model="m", async_workers=1, max_retries=0)

    async def main() -> None:
        first = asyncio.ensure_future(m.acall("first"))
        waiting = asyncio.ensure_future(m.acall("second"))
        while not arrived.is_set():
            await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        release.set()
        assert await first == "ok"

    try:
        asyncio.run(main())
    finally:
        release.set()
        m.close()
        server.stop()
