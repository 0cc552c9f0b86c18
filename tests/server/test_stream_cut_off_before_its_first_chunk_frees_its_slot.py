"""Threat: a streamed request cut off before its first chunk holds a request slot forever.

A streamed request is admitted (counted against ``max_concurrency``) before its
response starts, and its slot used to be given back only from inside the event
generator. When the client stopped reading (uvicorn's ``send`` of the response
start waits for the socket to drain) and then hung up, Starlette cancelled the
response before the generator's first step: the slot was never given back, and
after ``max_concurrency`` such clients every request was a 429, for good.

The client here is an ASGI caller that behaves as uvicorn does for such a peer:
the response start waits until the socket drains, and the disconnect is seen
while it waits.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from modules.server.app import create_app
from tests.tiny_model_fixture import started_module, tiny_model_path

__all__ = ["started_module", "tiny_model_path"]  # the fixtures, by their names


def _scope(path: str, body: bytes) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
    }


async def _hang_up_before_the_first_chunk(app: Any, path: str, body: dict[str, Any]) -> list[str]:
    """One request from a client that stops reading, then hangs up while the response start waits."""
    raw = json.dumps(body).encode()
    pending = [{"type": "http.request", "body": raw, "more_body": False}]
    gone = asyncio.Event()
    drained = asyncio.Event()
    sent: list[str] = []

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop(0)
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            gone.set()  # the peer is gone while the full socket buffer has not drained
            await drained.wait()
        sent.append(message["type"])

    task = asyncio.ensure_future(app(_scope(path, raw), receive, send))
    while not task.done():  # the socket drains (it is closed) only once the disconnect was seen
        await asyncio.sleep(0.01)
        if gone.is_set():
            drained.set()
    await task
    return sent


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "stream": True}),
        ("/v1/completions", {"model": "tiny", "prompt": "Once upon", "max_tokens": 4, "stream": True}),
    ],
    ids=["chat", "text"],
)
def test_a_stream_cut_off_before_its_first_chunk_gives_back_its_slot(started_module: Any, path: str, body: Any) -> None:
    app = create_app(started_module, model_name="tiny", max_concurrency=2)
    state = app.state.prompter

    async def scenario() -> None:
        for _ in range(3):  # more clients than slots: each must give its slot back
            await _hang_up_before_the_first_chunk(app, path, body)
        assert state.in_flight == 0
        assert not state.cancels

    asyncio.run(scenario())
