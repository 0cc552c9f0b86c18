"""A cancelled ``acall`` / ``arespond`` / ``astream`` sends nothing more: no retry reaches the server after the
awaiting task was cancelled, and the worker thread is free again (not parked in a ``Retry-After`` wait).

The module runs with one async worker, so the call made after the cancelled one runs only once the cancelled
job has ended on that thread: the server's attempt count then tells whether that job sent a retry.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable

import pytest
from fault_server import FaultServer, Reply, error_body
from wire.anthropic import KEY as ANTHROPIC_KEY
from wire.anthropic import AnthropicServer
from wire.common import json_answer

from modules import OnlineChatModule
from modules.online.retry import RetryPolicy


async def _drain(stream: object) -> str:
    async with stream as s:  # type: ignore[attr-defined]
        return "".join([piece async for piece in s])


CALLS: dict[str, Callable[[OnlineChatModule], Awaitable[object]]] = {
    "acall": lambda m: m.acall("hi"),
    "arespond": lambda m: m.arespond("hi"),
    "astream": lambda m: _drain(m.astream("hi")),
}


class Gate:
    """A retry policy's sleep that waits until the test opens it, and says when a call is waiting in it."""

    def __init__(self) -> None:
        self.waiting = threading.Event()
        self.open = threading.Event()

    def __call__(self, seconds: float) -> None:
        self.waiting.set()
        self.open.wait(10)


async def _cancel_in_retry_wait(m: OnlineChatModule, call: Callable[[OnlineChatModule], Awaitable[object]],
                                waiting: threading.Event, gate: Gate | None, wait: bool = True) -> None:  # fmt: skip
    task = asyncio.ensure_future(call(m))
    while wait and not waiting.is_set():
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    if gate is not None:
        gate.open.set()
    assert await m.acall("again") == "ok"  # one worker: this runs once the cancelled job has ended


@pytest.mark.parametrize("name", list(CALLS))
def test_a_cancelled_async_call_sends_no_retry(name: str) -> None:
    gate = Gate()
    with FaultServer() as server:
        server.script.append(Reply(status=429, headers={"retry-after": "1"}, body=error_body("slow down")))
        with OnlineChatModule(base_url=server.base_url, model="m", api_key="sk-test-0000", async_workers=1,
                              retry=RetryPolicy(sleep=gate)) as m:  # fmt: skip
            asyncio.run(_cancel_in_retry_wait(m, CALLS[name], gate.waiting, gate))
        assert server.attempts == 2  # the 429 and "again": the cancelled call's retry was never sent


def test_a_cancelled_call_stops_waiting_out_retry_after_at_once() -> None:
    """With the real sleep, the worker leaves a 60 s ``Retry-After`` wait when its task is cancelled."""
    with FaultServer() as server:
        server.script.append(Reply(status=429, headers={"retry-after": "60"}, body=error_body("slow down")))
        with OnlineChatModule(base_url=server.base_url, model="m", api_key="sk-test-0000", async_workers=1) as m:

            async def main() -> None:
                task = asyncio.ensure_future(m.acall("hi"))
                while server.attempts < 1:
                    await asyncio.sleep(0.001)
                # cancelled during the 429's answer or in the wait after it: either way, no retry follows
                await _cancel_in_retry_wait(m, lambda _m: task, threading.Event(), None, wait=False)

            asyncio.run(main())
        assert server.attempts == 2


def test_a_retry_still_happens_when_nothing_is_cancelled() -> None:
    gate = Gate()
    gate.open.set()
    with AnthropicServer() as server:
        rate_limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
        server.script.append(json_answer(rate_limited, 429, {"retry-after": "1"}))
        with OnlineChatModule("anthropic", model="c", api_key=ANTHROPIC_KEY, base_url=server.base_url,
                              retry=RetryPolicy(sleep=gate)) as m:  # fmt: skip
            assert asyncio.run(m.acall("hi")) == "Hello from Claude."
        assert len(server.received) == 2
