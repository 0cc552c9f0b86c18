"""The per-token path of a stream under load: no torch call, and one write for what has piled up.

At 64 streaming clients the engine's reader thread in the server delivered every token through
``torch.tensor`` and ``.tolist()``; each torch call let go of the GIL, and the reader then waited
for the busy event loop to give it back, token by token (64 clients: 3-4x one client's throughput,
p95 18-26x). And each token was its own write through the ASGI stack, even when several were
waiting for the same client.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.base import StreamDelta
from modules.local.batching import Job
from modules.local.engines.process import ProcessEngine
from modules.local.request import GenerationOptions, LocalRequest
from modules.local.streaming import stop_token_streamer
from modules.local.trainable import TrainableModule
from modules.server.lifecycle import ServerState
from modules.server.sse import chat_events, deltas


def _request() -> LocalRequest:
    return LocalRequest((), None, "", (), (5, 6, 7), GenerationOptions())


def test_streamed_tokens_reach_the_stream_without_a_torch_call(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path)
    ids = tokenizer.encode("hello there, streaming world")
    engine = ProcessEngine(threading.Event())
    streamer = stop_token_streamer(tokenizer, set())
    engine.jobs[3] = Job(_request(), threading.Event(), streamer)

    import torch

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a torch call on the per-token path")

    monkeypatch.setattr(torch, "tensor", forbidden)
    engine._take_step([(3, i) for i in ids], [("done", 3, ids, "length")])
    pieces = []
    while not streamer.queue.empty():
        item = streamer.queue.get_nowait()
        if isinstance(item, str):
            pieces.append(item)
    assert "".join(pieces) == tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)


class _Module:
    """What chat_events reads of a module: a blocking stream of deltas (here: three at once, then the end)."""

    def __init__(self, started: threading.Event) -> None:
        self.started = started

    def generate_stream(self, request: Any, cancel: Any, usage: Any = None) -> Iterator[StreamDelta]:
        self.started.wait(10)
        yield StreamDelta(text="a")
        yield StreamDelta(text="b")
        yield StreamDelta(text="c")
        yield StreamDelta(text="", finish_reason="stop")


def test_deltas_waiting_together_go_out_in_one_write_each_still_its_own_event() -> None:
    started = threading.Event()
    state = ServerState(_Module(started), "tiny", max_concurrency=4)

    async def collect() -> list[bytes]:
        cancel = state.admit()
        writes: list[bytes] = []
        async for chunk in chat_events(state, None, cancel, "chatcmpl-1", False):
            writes.append(chunk)
            if len(writes) == 1:  # the role chunk is out; the stream starts when we ask for more
                started.set()
                # A busy event loop: this runs once the stream has started and waits for its first
                # delta, and holds the loop while the producer puts all of them.
                asyncio.get_running_loop().call_soon(time.sleep, 0.3)
        return writes

    try:
        writes = asyncio.run(collect())
    finally:
        state.close()
    events = [e for w in writes for e in w.split(b"\n\n") if e]
    assert events[-1] == b"data: [DONE]"
    bodies = [json.loads(e[len(b"data: ") :]) for e in events[:-1]]
    texts = [b["choices"][0]["delta"].get("content") for b in bodies]
    assert texts == ["", "a", "b", "c", None]  # every delta its own event, in order
    assert bodies[-1]["choices"][0]["finish_reason"] == "stop"
    assert len(writes) <= 3, f"{len(events)} events in {len(writes)} writes: the waiting ones were not joined"


def test_deltas_yields_what_arrived_then_the_error() -> None:
    state = ServerState(_Module(threading.Event()), "tiny", max_concurrency=4)

    def make() -> Iterator[StreamDelta]:
        yield StreamDelta(text="x")
        raise ValueError("boom")

    async def run() -> tuple[list[list[Any]], BaseException | None]:
        got: list[list[Any]] = []
        cancel = state.admit()
        try:
            async for batch in deltas(state, make, cancel):
                got.append(batch)
        except ValueError as exc:
            return got, exc
        return got, None

    try:
        got, error = asyncio.run(run())
    finally:
        state.close()
    assert [d.text for batch in got for d in batch] == ["x"]
    assert isinstance(error, ValueError) and state.in_flight == 0


def test_concurrent_streams_over_http_need_no_thread_each_and_equal_the_plain_answers(
    tiny_model_path: Path,  # noqa: F811
) -> None:
    """16 streams at once on a batched server: the text of each equals its plain answer, and while they
    run the server holds no thread per stream (two each, before: 'prompter-stream', 'prompter-generate')."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    module = TrainableModule(tiny_model_path, name="tiny", max_new_tokens=24, max_batch_size=16).start(serve=True)
    prompts = [[{"role": "user", "content": f"Stream {i}: what about item {i * 3}?"}] for i in range(16)]
    try:
        alone = [module.generate(module.prepare(p, max_new_tokens=24)).text for p in prompts]
        seen: set[str] = set()
        before = {t.ident for t in threading.enumerate()}  # other tests' threads, still winding down, are not ours
        running = threading.Event()
        finished = threading.Event()

        def watch() -> None:
            while not finished.is_set():
                if running.is_set():
                    seen.update(t.name for t in threading.enumerate() if t.ident not in before)
                time.sleep(0.002)

        def stream(i: int) -> str:
            body = {"model": "tiny", "messages": prompts[i], "max_tokens": 24, "stream": True}
            text = []
            with httpx.stream("POST", module.url + "/chat/completions", json=body, timeout=60) as r:
                for line in r.iter_lines():
                    running.set()
                    if line.startswith("data: {"):
                        choices = json.loads(line[6:])["choices"]
                        if choices and choices[0]["delta"].get("content"):
                            text.append(choices[0]["delta"]["content"])
            return "".join(text)

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            with ThreadPoolExecutor(16) as pool:
                streamed = list(pool.map(stream, range(16)))
        finally:
            finished.set()
            watcher.join()
    finally:
        module.stop()
    assert streamed == alone
    # the names of the two threads each stream had (the server's executor threads are 'prompter-generate_N')
    per_stream = sorted(n for n in seen if n in ("prompter-stream", "prompter-generate"))
    assert per_stream == [], f"threads per stream while streaming: {per_stream[:4]}"
