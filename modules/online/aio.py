"""Async calls: ``await m.acall(...)`` and ``async for piece in m.astream(...)``.

The blocking client runs on a small thread pool owned by the module (shared by
its ``share()`` handles), so the event loop never waits on a socket: each call,
and each step of a stream, is one job on the pool. Everything the sync path
guarantees holds unchanged (retries, the total deadline, the size cap, masked
secrets, typed errors), because it *is* the sync path.

The pool has ``async_workers`` threads (default :data:`ASYNC_WORKERS`), and the
module's connection pool keeps as many connections per host, so concurrent
calls reuse connections instead of opening and discarding them; more
concurrent calls than that wait their turn, without extra threads or sockets.
Raise ``OnlineChatModule(async_workers=...)`` when the server takes more
requests at once (each call holds a thread for as long as the model thinks).

Cancelling an awaiting task does not interrupt the
attempt already running on its thread: that attempt ends within its timeout and its
result is dropped. It does stop what would follow: an ``OnlineChatModule`` call sends no
retry after its task was cancelled (:mod:`modules.online.calls`).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, TypeVar, cast

from modules.base import AssistantMessage, ChatStream, ModuleBase, ModuleInput, ToolCall
from modules.errors import ModuleConfigError
from modules.online.response import Response

__all__ = ["ASYNC_WORKERS", "AsyncCalls", "AsyncChatStream", "AsyncRunner"]

#: Threads per module for async calls (and pooled connections per host): LLM calls wait on the model,
#: so many run at once; 200 calls of 0.2 s on a loopback server: 10 workers 4.4 s, 64 workers 0.86 s.
ASYNC_WORKERS = 64

T = TypeVar("T")
A = TypeVar("A", bound="AsyncCalls")
_END = object()


class AsyncRunner:
    """The module's thread pool for async calls, made on first use and shut down by ``close()``."""

    def __init__(self, workers: int = ASYNC_WORKERS) -> None:
        if type(workers) is not int or not 1 <= workers <= 1024:
            raise ModuleConfigError(f"async_workers: expected a whole number from 1 to 1024, got {workers!r}")
        self.workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def __copy__(self) -> AsyncRunner:
        return self  # share() handles use the same pool

    def __deepcopy__(self, memo: dict[int, Any]) -> AsyncRunner:
        return self

    async def run(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await self.job(functools.partial(function, *args, **kwargs))

    async def job(self, function: Callable[[], T], cancelled: threading.Event | None = None) -> T:
        """``function()`` on the pool; *cancelled* is set when the awaiting task is cancelled, so that
        the job, still running on its thread, can stop before its next step (a retry, say)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="prompter-async")
            pool = self._pool
        try:
            return await asyncio.wrap_future(pool.submit(function))
        except asyncio.CancelledError:
            if cancelled is not None:
                cancelled.set()
            if pool is not self._pool and not _task_cancelled():
                # close() dropped the job before it started: a bare CancelledError in a task nobody
                # cancelled would read as a cancellation (gather, TaskGroup), so name what happened
                raise ModuleConfigError(
                    "the module was closed while this call waited for a worker thread; nothing was sent"
                ) from None
            raise

    def close(self) -> None:
        """Stop the threads (after the jobs already running)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _task_cancelled() -> bool:
    """Whether the running task was cancelled (True where Python cannot tell: before 3.11)."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or cancelling() > 0


class AsyncChatStream:
    """``async for piece in stream``; afterwards ``text``, ``tool_calls``, ``finish_reason``, ``message`` and
    ``response`` as on :class:`~modules.online.response.OnlineChatStream`. ``async with`` (or ``await aclose()``)
    releases the connection when you stop early."""

    def __init__(
        self, runner: AsyncRunner, opened: Callable[[], ChatStream], cancelled: threading.Event | None = None
    ) -> None:
        self._runner = runner
        self._open = opened
        self._cancelled = cancelled  # set when a task awaiting the opening is cancelled
        self._stream: ChatStream | None = None
        # One step at a time on the stream: a cancelled task's step keeps running on its thread,
        # and closing the stream meanwhile would raise "generator already executing".
        self._steps = threading.Lock()
        # Closing never waits for a running step (a read may wait for the read timeout, and a cancelled
        # task's `async with` would wait with it): the step closes the stream when it ends.
        self._state = threading.Lock()  # guards the two flags below
        self._busy = False
        self._closing = False

    async def _opened(self) -> ChatStream:
        if self._stream is None:
            self._stream = await self._runner.job(self._open, self._cancelled)
        return self._stream

    def __aiter__(self) -> AsyncChatStream:
        return self

    async def __anext__(self) -> str:
        stream = await self._opened()
        piece = await self._runner.run(self._step, stream)
        if piece is _END:
            raise StopAsyncIteration
        assert isinstance(piece, str)  # noqa: S101 - a ChatStream yields text pieces
        return piece

    async def aclose(self) -> None:
        if self._stream is not None:
            await self._runner.run(self._close, self._stream)

    def _step(self, stream: ChatStream) -> object:
        with self._steps:
            with self._state:
                if self._closing:
                    return _END
                self._busy = True
            try:
                return next(stream, _END)
            finally:
                with self._state:
                    self._busy = False
                    closing = self._closing
                if closing:  # closed while this step ran (a cancelled task left its `async with`)
                    stream.close()

    def _close(self, stream: ChatStream) -> None:
        with self._state:
            self._closing = True
            if self._busy:
                return  # the running step closes the stream as it ends
        with self._steps:
            stream.close()

    async def __aenter__(self) -> AsyncChatStream:
        await self._opened()  # the request is sent here, so its errors raise here
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def text(self) -> str:
        return "" if self._stream is None else self._stream.text

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [] if self._stream is None else self._stream.tool_calls

    @property
    def finish_reason(self) -> str | None:
        return None if self._stream is None else self._stream.finish_reason

    @property
    def message(self) -> dict[str, Any]:
        """The assistant turn so far, as :attr:`ChatStream.message <modules.base.ChatStream.message>`."""
        return {"role": "assistant", "content": ""} if self._stream is None else self._stream.message

    @property
    def response(self) -> Response | None:
        """The whole answer once read to its end, where the module gives one (``OnlineChatModule``)."""
        found = getattr(self._stream, "response", None)
        return found if isinstance(found, Response) else None


class AsyncCalls:
    """``acall``, ``arespond`` and ``astream`` for any :class:`~modules.base.ModuleBase` subclass that mixes
    this in (``class M(AsyncCalls, ModuleBase[...])``): its own ``m(...)``, ``m.respond(...)`` and
    ``m.stream(...)``, run on the module's :class:`AsyncRunner` (its ``_async``, made on first use if the
    module has none; ``close_async()`` ends its threads). A module that sets ``self._async`` in its
    constructor shares one runner with every ``share()`` handle."""

    def respond(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> Response:
        """The whole :class:`~modules.online.response.Response` of a call: text, tool calls, finish reason,
        usage and the backend's raw answer; ``model`` is the module's ``name`` when the answer names none."""
        module = cast("ModuleBase[Any]", self)
        response = Response.of(module._complete(module.build_request(input, history, tools, **generation)), None)
        name = getattr(self, "name", None)
        return replace(response, model=name) if response.model is None and isinstance(name, str) else response

    async def arespond(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> Response:
        """``await m.arespond(...)``: :meth:`respond`, run off the event loop."""
        self._check_async(input, history, tools, generation)
        cancelled = threading.Event()
        call = functools.partial(self._for_task(cancelled).respond, input, history, tools, **generation)
        response: Response = await self._async_runner().job(call, cancelled)
        return response

    def _check_async(
        self,
        input: ModuleInput,
        history: Sequence[Any] | None,
        tools: Sequence[Mapping[str, Any]] | None,
        generation: Mapping[str, Any],
    ) -> None:
        """Raise, before any worker thread starts, what the call would raise at once (a module that is
        stopped: TrainableModule); nothing here."""

    def _for_task(self: A, cancelled: threading.Event) -> A:
        """The handle an async call's work runs on, *cancelled* being set once its task is cancelled: this
        one; a module whose calls wait and retry gives one that stops retrying then (OnlineChatModule)."""
        return self

    def _async_runner(self) -> AsyncRunner:
        runner = getattr(self, "_async", None)
        if not isinstance(runner, AsyncRunner):
            runner = AsyncRunner()
            self._async = runner
        return runner

    def close_async(self) -> None:
        """End the async threads (a later async call starts them again)."""
        runner = getattr(self, "_async", None)
        if isinstance(runner, AsyncRunner):
            runner.close()

    async def acall(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> str | AssistantMessage:
        """``await m.acall(...)``: the call of ``m(...)``, run off the event loop."""
        self._check_async(input, history, tools, generation)
        cancelled = threading.Event()
        module = cast("ModuleBase[Any]", self._for_task(cancelled))
        call = functools.partial(module.__call__, input, history, tools, **generation)
        answer: str | AssistantMessage = await self._async_runner().job(call, cancelled)
        return answer

    def astream(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> AsyncChatStream:
        """``async for piece in m.astream(...)``: ``m.stream(...)``, each step run off the event loop
        (the request is sent at the first step, or on ``async with``)."""
        module = cast("ModuleBase[Any]", self)
        return AsyncChatStream(self._async_runner(), lambda: module.stream(input, history, tools, **generation))
