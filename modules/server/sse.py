"""Server-sent events: a blocking delta iterator run in a thread, written as OpenAI's chunks.

Once the status line is sent an error can only be reported in-band, so any
failure mid-stream becomes a ``data: {"error": {...}}`` event, never a silent cut.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from modules.base import StreamDelta
from modules.server.errors import cancelled_error, from_exception
from modules.server.lifecycle import ServerState
from modules.server.validation import finish_reason

__all__ = ["batches", "chat_events", "deltas", "sse_event", "text_events", "usage_event"]


_LINE_BREAKS = {ord("\x85"): "\\u0085", ord("\u2028"): "\\u2028", ord("\u2029"): "\\u2029"}
"""Characters ``str.splitlines`` breaks lines at besides CR and LF (JSON escapes the C0 ones itself): SSE
ends a line only at CR or LF, but clients that read the stream with ``httpx``'s ``iter_lines`` (as
``httpx-sse`` does) split there and would cut a ``data:`` line in two. Escaped, the JSON is the same."""


def sse_event(data: Any) -> bytes:
    try:
        text = json.dumps(data, ensure_ascii=False).translate(_LINE_BREAKS)
        return b"data: " + text.encode() + b"\n\n"
    except UnicodeEncodeError:  # a lone surrogate quoted from client text: ASCII JSON still encodes
        return b"data: " + json.dumps(data).encode() + b"\n\n"


async def deltas(
    state: ServerState, make: Callable[[], Iterator[StreamDelta]], cancel: threading.Event
) -> AsyncIterator[list[Any]]:
    """Run a blocking delta iterator in a thread and hand its items to the event loop.

    Yields lists of StreamDelta items, in order: each list holds every item that had
    arrived by the time the event loop came back for more (one, on a quiet server),
    so a busy server writes one chunk per stream and turn instead of one per token;
    then re-raises whatever the iterator raised. If the consumer goes away (client
    disconnect cancels us), the cancel flag stops the generation at its next token.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def put(item: tuple[str, Any]) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is gone: nobody is listening any more
            cancel.set()

    def pump() -> None:
        try:
            for delta in make():
                put(("delta", delta))
            put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - forwarded to the consumer
            put(("error", exc))

    threading.Thread(target=pump, name="prompter-stream", daemon=True).start()
    try:
        while True:
            items = [await queue.get()]
            while not queue.empty() and items[-1][0] == "delta":
                items.append(queue.get_nowait())
            ready = [value for kind, value in items if kind == "delta"]
            if ready:
                yield ready
            kind, value = items[-1]
            if kind == "end":
                return
            if kind == "error":
                raise value
    finally:
        cancel.set()
        state.release(cancel)


async def batches(
    state: ServerState, request: Any, cancel: threading.Event, usage: dict[str, int] | None
) -> AsyncIterator[list[Any]]:
    """The module's deltas in lists, on the event loop where the module can (``stream_batches``: no
    thread per stream), else from :meth:`generate_stream` in a thread (:func:`deltas`)."""
    stream = getattr(state.module, "stream_batches", None)
    source = stream(request, cancel, usage) if stream is not None else None
    if source is None:
        generate_stream = state.module.generate_stream
        make: Callable[[], Iterator[StreamDelta]] = (
            (lambda: generate_stream(request, cancel, usage))
            if usage is not None and _takes_usage(generate_stream)
            else (lambda: generate_stream(request, cancel))
        )
        async for batch in deltas(state, make, cancel):
            yield batch
        return
    try:
        async for batch in source:
            yield batch
    finally:
        cancel.set()
        await source.aclose()  # an async generator: its own finally stops the generation
        state.release(cancel)


def _takes_usage(generate_stream: Callable[..., Any]) -> bool:
    """Whether a module's ``generate_stream`` takes the optional third argument, the dict it fills with the
    token counts: :class:`~modules.server.app.ServableModule` asks only for ``(request, cancel)``, and a
    module without it streams as well (its usage chunk then has no counts, as its plain answer has)."""
    try:
        inspect.signature(generate_stream).bind(None, None, None)
    except TypeError:
        return False
    except ValueError:  # no signature to read (a builtin): pass the counts, as to any module
        return True
    return True


def _chunk(rid: str, kind: str, created: int, model: str, choice: dict[str, Any], usage: bool) -> bytes:
    """One streamed chunk of one choice; with *usage* asked for, ``"usage": null`` (as OpenAI sends every
    chunk before the usage chunk)."""
    event: dict[str, Any] = {"id": rid, "object": kind, "created": created, "model": model, "choices": [choice]}
    if usage:
        event["usage"] = None
    return sse_event(event)


def _opening(first: StreamDelta) -> dict[str, Any]:
    """The role chunk's delta, sent with the answer's first delta (it is not known before): as OpenAI streams
    it, content ``""`` opens an answer that starts with text (or is empty) and ``null`` one that starts with a
    tool call, so the stream a client joins has the plain answer's content (``None`` for tool calls alone)."""
    return {"role": "assistant", "content": "" if first.text or not first.tool_calls else None}


async def chat_events(
    state: ServerState, request: Any, cancel: threading.Event, rid: str, usage: bool
) -> AsyncIterator[bytes]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return _chunk(rid, "chat.completion.chunk", created, state.model_name, choice, usage)

    counts: dict[str, int] = {}
    calls_sent = 0  # a call's index counts over the whole answer: each delta may bring more completed calls
    opened = False  # the role chunk: sent with the answer's first delta, once it says how the answer starts
    try:
        async for batch in batches(state, request, cancel, counts if usage else None):
            events: list[bytes] = []  # one write for the batch: each delta is still its own event
            cancelled = False
            for delta in batch:
                if not opened and (delta.text or delta.tool_calls or delta.finish_reason not in (None, "cancelled")):
                    opened = True
                    events.append(chunk(_opening(delta)))
                if delta.text:
                    events.append(chunk({"content": delta.text}))
                if delta.tool_calls:
                    calls = [{"index": calls_sent + i, **dict(c)} for i, c in enumerate(delta.tool_calls)]
                    calls_sent += len(calls)
                    events.append(chunk({"tool_calls": calls}))
                if delta.finish_reason == "cancelled":
                    cancelled = True
                    break
                if delta.finish_reason is not None:
                    events.append(chunk({}, finish_reason(delta.finish_reason)))
            if events:
                yield b"".join(events)
            if cancelled:
                raise cancelled_error(state)
    except BaseException as exc:  # noqa: BLE001 - reported in-band: the status line is already sent
        if isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
            raise
        yield sse_event(from_exception(exc).body())
        return
    if not opened:  # a module that ended its stream without a delta: an empty answer, as its plain one is
        yield chunk({"role": "assistant", "content": ""})
    if usage:
        yield usage_event(rid, "chat.completion.chunk", created, state.model_name, counts)
    yield b"data: [DONE]\n\n"


async def text_events(
    state: ServerState, request: Any, cancel: threading.Event, rid: str, usage: bool = False
) -> AsyncIterator[bytes]:
    """``/v1/completions`` streamed; with *usage* (``stream_options.include_usage``), a last chunk with
    no choices and the token counts, as OpenAI's completions API sends it (the chunks before it carry
    ``"usage": null``)."""
    created = int(time.time())

    def chunk(text: str, finish: str | None = None) -> bytes:
        choice = {"index": 0, "text": text, "finish_reason": finish, "logprobs": None}
        return _chunk(rid, "text_completion", created, state.model_name, choice, usage)

    counts: dict[str, int] = {}
    try:
        async for batch in batches(state, request, cancel, counts if usage else None):
            events: list[bytes] = []  # one write for the batch: each delta is still its own event
            cancelled = False
            for delta in batch:
                if delta.finish_reason == "cancelled":
                    cancelled = True
                    break
                if delta.text or delta.finish_reason is not None:
                    finish = finish_reason(delta.finish_reason) if delta.finish_reason else None
                    events.append(chunk(delta.text, finish))
            if events:
                yield b"".join(events)
            if cancelled:
                raise cancelled_error(state)
    except BaseException as exc:  # noqa: BLE001 - reported in-band
        if isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
            raise
        yield sse_event(from_exception(exc).body())
        return
    if usage:
        yield usage_event(rid, "text_completion", created, state.model_name, counts)
    yield b"data: [DONE]\n\n"


def usage_event(rid: str, kind: str, created: int, model: str, counts: dict[str, int]) -> bytes:
    """The last chunk of a stream asked for ``stream_options.include_usage``: no choices, the token counts."""
    return sse_event({"id": rid, "object": kind, "created": created, "model": model, "choices": [], "usage": counts})
