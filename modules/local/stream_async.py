"""A stream's deltas for an event loop: no thread per stream, one wake-up for every piece that piled up.

:meth:`~modules.local.trainable.TrainableModule.generate_stream` runs a request
in a thread and hands each piece of text through a queue to another thread that
cuts stop strings: two threads per stream, two hand-offs per token. At 64
streaming clients that is 128 threads taking turns at one GIL for every token.
Here the engine's own thread (the decode loop, or the engine process's reader)
decodes each stream's ids and appends the text to a list shared with one event
loop; the first append after the loop last looked schedules one call there,
which hands everything that piled up to the streams waiting on it. Each stream
cuts its pieces with the same :class:`~modules.local.streaming.DeltaCutter` as
:func:`~modules.local.streaming.stream_deltas`, so both stream alike.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

from modules.base import StreamDelta
from modules.local.batching import Job, new_job
from modules.local.request import LocalRequest
from modules.local.streaming import DeltaCutter, _TokenStreamer

__all__ = ["stream_batches"]

_END = object()
"""What a stream receives once its job has ended (after its last piece)."""


class _Stream:
    """One stream's pieces as the event loop has received them, and a flag for its consumer."""

    def __init__(self) -> None:
        self.items: list[object] = []
        self.ready = asyncio.Event()

    def arrive(self, item: object) -> None:
        self.items.append(item)
        self.ready.set()

    async def take(self) -> list[object]:
        await self.ready.wait()
        self.ready.clear()
        items, self.items = self.items, []
        return items


class _Feed:
    """Pieces from the engine's thread to one event loop: one ``call_soon_threadsafe`` per batch."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.pending: list[tuple[_Stream, object]] = []
        self.scheduled = False

    def push(self, stream: _Stream, item: object) -> None:
        with self.lock:
            self.pending.append((stream, item))
            if self.scheduled:
                return
            self.scheduled = True
        try:
            self.loop.call_soon_threadsafe(self.drain)
        except RuntimeError:  # the loop is closed: nobody reads these streams any more
            pass

    def drain(self) -> None:
        with self.lock:
            items, self.pending, self.scheduled = self.pending, [], False
        for stream, item in items:
            stream.arrive(item)


_FEEDS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Feed] = weakref.WeakKeyDictionary()
_FEEDS_LOCK = threading.Lock()


def _feed(loop: asyncio.AbstractEventLoop) -> _Feed:
    with _FEEDS_LOCK:
        feed = _FEEDS.get(loop)
        if feed is None:
            feed = _FEEDS[loop] = _Feed(loop)
        return feed


class _FeedStreamer(_TokenStreamer):
    """A streamer whose text goes to *stream* through *feed* (called in the engine's thread)."""

    def __init__(self, tokenizer: Any, stop_ids: set[int], feed: _Feed, stream: _Stream) -> None:
        super().__init__(tokenizer, stop_ids)
        self.feed, self.stream = feed, stream

    def on_text(self, text: str) -> None:
        self.feed.push(self.stream, text)


async def stream_batches(
    module: Any,
    submit: Callable[[Job], None],
    request: LocalRequest,
    flag: threading.Event,
    usage: dict[str, int] | None,
) -> AsyncIterator[list[StreamDelta]]:
    """The deltas of *request* on *module* (a TrainableModule whose engine has ``submit``), in lists:
    each list holds what was settled since the last one; the last delta has the finish reason.

    Setting *flag*, or closing the iterator, stops the generation at its next token.
    """
    loop = asyncio.get_running_loop()
    feed, stream = _feed(loop), _Stream()
    streamer = _FeedStreamer(module._load_tokenizer(), set(module._stop_ids()), feed, stream)
    job = new_job(module, request, flag, streamer)
    job.on_end = lambda _job: feed.push(stream, _END)  # after the streamer's last text: same feed, in order
    cutter = DeltaCutter(module._stop_strings(request), module._tool_syntax(request))
    try:
        submit(job)
        ended = False
        while not ended:
            out: list[StreamDelta] = []
            for item in await stream.take():
                if item is _END:
                    ended = True
                    break
                if cutter.cut is None:
                    delta = cutter.feed(str(item))
                    if delta is not None:
                        out.append(delta)
                    if cutter.cut is not None:
                        flag.set()  # stop generating: the rest of the answer is cut anyway
            if out:
                yield out
        if job.error is not None:
            outcome: dict[str, Any] = {"error": job.error}
        else:
            assert job.outcome is not None  # noqa: S101 - set before on_end
            outcome = {"ids": job.outcome[0], "finish": job.outcome[1]}
        yield [cutter.finish(request, outcome, usage)]
    finally:
        flag.set()
