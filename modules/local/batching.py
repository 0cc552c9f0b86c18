"""Continuous batching: requests join a running decode loop as others finish, and take turns when it is full.

Every generation of a :class:`~modules.local.trainable.TrainableModule` on the
transformers engine runs in one worker thread's decode loop (:class:`Batcher`).
Each step feeds one token to every running row (one forward pass for all of
them); between steps, requests that arrived meanwhile are prefilled together
and join (see :class:`~modules.local.engines.kv_slots.Slots`, or
:class:`~modules.local.engines.kv_rows.Rows` for models whose caches are not
plain), finished rows leave, and, when more requests wait than there are free rows, rows that have
run ``quantum`` steps since they joined step aside to the back of the queue
with their KV cache, so nobody waits for a whole long answer.

``max_batch_size`` bounds the rows; at 1 requests run one at a time (taking
turns every ``quantum`` tokens): the serialised mode, with no per-token
handoff between threads, so it keeps its throughput as clients are added.

Each row stops on its own (its stop ids, its ``max_new_tokens``, its stop
strings, its cancel flag); its tokens stream to its own streamer as they are
generated. Greedy rows pick ``argmax`` of their logits, sampled rows draw with
their own options and generator (see :mod:`modules.local.engines.sampling`).

Why we did not use transformers' own continuous batching
(``model.generate_batch`` / ``ContinuousBatchingManager``): on this CPU, with
the tiny model, its 64-request batch took 10.5 s where 64 single ``generate``
calls took 3.1 s (measured 2026-11-23, transformers 5.23, torch 2.13): its paged
attention is built for GPUs. Its greedy answers matched, so it remains an
option for CUDA; the vLLM engine is the way to scale beyond one CPU.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from modules.errors import ModelNotStartedError, ServerStoppedError
from modules.local.engines.admission import checked_request, vocabulary_size
from modules.local.engines.kv_rows import Rows, RowState, plain_cache_ok
from modules.local.engines.kv_slots import Slots
from modules.local.engines.prefix_cache import MAX_TOKENS as PREFIX_TOKENS
from modules.local.engines.prefix_cache import PrefixCache
from modules.local.engines.sampling import choose_tokens, generator_for
from modules.local.request import LocalRequest
from modules.local.streaming import StopWatch, open_stream, stream_ids

__all__ = ["PREFIX_TOKENS", "QUANTUM", "BatchedModule", "Batcher", "Job", "ended_future", "new_job"]

QUANTUM = 16
"""Steps a row runs, once admitted, before it may step aside for a waiting request."""


class BatchedModule(Protocol):
    """What a :class:`Batcher` uses of the module it serves (``TrainableModule``).

    ``_backend`` holds the loaded ``model``, its ``tokenizer``, the ``lock``
    that guards the model and the ``cancel_all`` event set by ``stop()``.
    """

    @property
    def _backend(self) -> Any: ...

    def _stop_ids(self) -> list[int]: ...

    def _stop_strings(self, request: LocalRequest) -> tuple[str, ...]: ...


@dataclass
class Job:
    """One request waiting for (or inside) the decode loop."""

    request: LocalRequest
    cancel: threading.Event | None
    streamer: Any
    tokens: list[int] = field(default_factory=list)
    outcome: tuple[list[int], str] | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)
    saved: RowState | None = None  # its KV cache while it waits after stepping aside
    watch: Any = None  # a StopWatch when it has stop strings
    generator: Any = None
    steps: int = 0  # steps since it last joined the batch
    admitted: int = -1  # the loop's step count when it first joined (observable by tests)
    ended_at: int = -1  # ... and when it ended
    on_end: Callable[[Job], None] | None = None  # called (in the loop's thread) once it has ended

    def cancelled(self) -> bool:
        return (self.cancel is not None and self.cancel.is_set()) or (
            self.watch is not None and self.watch.hit.is_set()
        )


def new_job(module: BatchedModule, request: LocalRequest, cancel: threading.Event | None, streamer: Any) -> Job:
    """A :class:`Job` for any engine; with stop strings, a :class:`StopWatch` ends it at the token that
    completes one, streamed or not.

    (A stream also cuts its text at stop strings itself, but its consumer notices a token or more
    later: the engine must end the job at the same token as the plain answer, so a stream's
    ``usage`` is the plain answer's and no token is generated past the stop.)
    """
    job = Job(request, cancel, streamer)
    stops = module._stop_strings(request)
    if stops:
        job.watch = StopWatch(module._backend.tokenizer, stops, set(module._stop_ids()))
    return job


def ended_future(job: Job) -> Any:
    """An ``asyncio.Future`` of the running loop that resolves (to None) once *job* has ended.

    Sets ``job.on_end``: the engine's thread (whichever ends the job) wakes the loop
    with ``call_soon_threadsafe``; a loop already closed is not woken, and the engine
    thread never sees an error from it.
    """
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()

    def resolve() -> None:
        if not future.done():
            future.set_result(None)

    def on_end(_job: Job) -> None:
        try:
            loop.call_soon_threadsafe(resolve)
        except RuntimeError:  # the loop was closed meanwhile: nobody awaits the answer
            pass

    job.on_end = on_end
    return future


class Batcher:
    """The decode loop of one loaded model: callers block in :meth:`run`; one worker thread serves them all.

    The worker thread starts with the model (:meth:`reopen`, called by ``start()``)
    and ends at :meth:`stop`, so a request never has to wait for a thread to start.
    """

    def __init__(
        self, module: BatchedModule, max_batch: int, quantum: int = QUANTUM, prefix_tokens: int = PREFIX_TOKENS
    ) -> None:
        self.module = module
        self.prefix_tokens = prefix_tokens  # how many prompt tokens' keys and values to keep for reuse (0: none)
        self.max_batch = max_batch
        self.quantum = quantum
        self.plain_cache: bool | None = None  # whether rows may be cut and pasted (checked at the first run)
        self.queue: deque[Job] = deque()
        self.running: list[Job] = []
        self.cond = threading.Condition()
        self.worker: threading.Thread | None = None
        self.closing = False
        self.step_count = 0
        self.rows: Slots | Rows | None = None
        # called in the loop's thread after each pass (the engine process sends what the pass produced)
        self.after_step: Callable[[], None] | None = None

    def _prefix_cache(self) -> PrefixCache | None:
        return PrefixCache(self.prefix_tokens) if self.prefix_tokens else None

    def stop(self, timeout: float = 2.0) -> None:
        """End the worker thread (after the step it runs; ``stop()`` of the module cancels the rows)."""
        with self.cond:
            self.closing = True
            worker = self.worker
            self.cond.notify_all()
        if worker is not None and worker is not threading.current_thread():
            worker.join(timeout)

    def reopen(self) -> None:
        """Accept work again (after :meth:`stop`) and start the worker (``start()`` calls this)."""
        with self.cond:
            self.closing = False
            self._ensure_worker()

    def _ensure_worker(self) -> None:
        if self.worker is None or not self.worker.is_alive():
            self.worker = threading.Thread(target=self._loop, name="prompter-batcher", daemon=True)
            self.worker.start()

    def run(self, job: Job) -> tuple[list[int], str]:
        """Queue *job*, wait for it to end, and return its new token ids and finish reason."""
        self.submit(job)
        job.done.wait()
        if job.error is not None:
            raise job.error
        assert job.outcome is not None  # noqa: S101 - set together with done
        return job.outcome

    def submit(self, job: Job) -> None:
        """Queue *job* and return at once; ``job.done`` is set (and ``job.on_end`` called) when it ends.

        A request the loop cannot run (an id past the vocabulary, no ids, options of the wrong type)
        raises :class:`~modules.errors.ModuleConfigError` here: in the loop it would fail its batch.
        """
        job.request = checked_request(job.request, vocabulary_size(self.module._backend.model))
        job.generator = generator_for(job.request.options)
        with self.cond:
            if self.closing:
                raise ServerStoppedError("the model was stopped before this request ran")
            self.queue.append(job)
            self._ensure_worker()
            self.cond.notify()

    # -- the loop ---------------------------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self.cond:
                self.cond.wait_for(lambda: bool(self.queue or self.running) or self.closing)
                if self.closing and not self.queue and not self.running:
                    self.worker = None  # stopped: let the thread end; reopen() starts another
                    self.rows = None  # with it the model, its row buffers and cached prefixes, so stop() unloads
                    return
                joining = self._take_joiners()
            try:
                self._iterate(joining)
            except BaseException as exc:  # noqa: BLE001 - every caller in the loop gets it
                self._fail([*self.running, *joining], exc)
                self.running, self.rows = [], None
            if self.after_step is not None:  # after every pass, whether it stepped, ended jobs or failed
                self.after_step()

    def _take_joiners(self) -> list[Job]:
        if any(j.cancelled() for j in self.queue):  # a waiting request cancelled: free its caller now
            for job in [j for j in self.queue if j.cancelled()]:
                self.queue.remove(job)
                self._end_if_cancelled(job)
        joining: list[Job] = []
        limit = self.max_batch if self.plain_cache is not False else 1
        while self.queue and len(self.running) + len(joining) < limit:
            joining.append(self.queue.popleft())
        return joining

    def _iterate(self, joining: list[Job]) -> None:
        import torch

        b = self.module._backend
        with b.lock, torch.inference_mode():
            if b.model is None or b.cancel_all.is_set():
                if b.cancel_all.is_set() or b.model is None and self.closing:
                    ran = [j for j in [*self.running, *joining] if j.admitted >= 0]  # running, or stepped aside
                    self._fail(ran, ServerStoppedError("the model was stopped while this request was generating"))
                    error: BaseException = ServerStoppedError("the model was stopped before this request ran")
                else:
                    error = ModelNotStartedError(f"{self.module!r}: call start() before generating")
                self._fail([*self.running, *joining], error)  # the rest (_fail skips jobs already ended)
                self.running, self.rows = [], None
                return
            if self.rows is None or self.rows.model is not b.model:
                self.plain_cache = plain_cache_ok(b.model)
                self.rows = Slots(b.model, self._prefix_cache()) if self.plain_cache else Rows(b.model)
            joining = [j for j in joining if not self._end_if_cancelled(j)]
            if isinstance(self.rows, Slots) and self.rows.packs and any(j.saved is None for j in joining):
                # one pass: the running rows decode and the new requests are prefilled beside them
                new = [j for j in joining if j.saved is None]
                self._admit([j for j in joining if j.saved is not None])  # restores them (saved is cleared)
                logits = self.rows.step_and_join([list(j.request.input_ids) for j in new])
                self._enter(new)
            else:
                self._admit(joining)
                if not self.running:
                    return
                logits = self.rows.step()
            self.step_count += 1
            self._advance(logits)
            self._step_aside()

    def _admit(self, joining: list[Job]) -> None:
        """Restore jobs that stepped aside; prefill new ones (together) and pick their first token."""
        assert self.rows is not None  # noqa: S101 - set by _iterate
        returning = [j for j in joining if j.saved is not None]
        new = [j for j in joining if j.saved is None]
        if returning:
            self.rows.restore([j.saved for j in returning if j.saved is not None])
            for job in returning:
                job.saved, job.steps = None, 0
            self.running += returning
        if new:
            first = self.rows.count
            logits = self.rows.prefill([list(j.request.input_ids) for j in new])
            self._enter(new)
            self._emit(new, choose_tokens(logits, _sampled(new)), first)

    def _enter(self, new: list[Job]) -> None:
        """*new* jobs have just been given the last rows: they run from now on."""
        for job in new:
            job.admitted = self.step_count
            if job.streamer is not None:
                open_stream(job.streamer, job.request.input_ids)
        self.running += new

    def _advance(self, logits: Any) -> None:
        self._emit(self.running, choose_tokens(logits, _sampled(self.running)), 0)

    def _emit(self, jobs: list[Job], tokens: list[int], first: int) -> None:
        """Give each of *jobs* (rows ``first``...) its new token; finished rows leave the batch.

        Runs for every row at every step: the common case (a greedy row, no streamer, no stop
        strings, not at its end) costs a few attribute reads and no allocation.
        """
        assert self.rows is not None  # noqa: S101 - set by _iterate
        stop_ids = set(self.module._stop_ids())
        self.rows.set_next(first, tokens)
        ended: set[int] = set()
        for job, token in zip(jobs, tokens, strict=True):
            sequence = job.tokens
            sequence.append(token)
            job.steps += 1
            if job.streamer is not None:
                stream_ids(job.streamer, [token])
            if job.watch is not None:
                job.watch.put_ids((token,))
            if token in stop_ids:
                self._finish(job, sequence[:-1], "stop")
            elif len(sequence) >= job.request.options.max_new_tokens:
                self._finish(job, sequence, "length")
            elif job.cancelled():
                self._finish(job, sequence, "cancelled")
            else:
                continue
            ended.add(id(job))
        if ended:
            order = self.rows.remove({i for i, job in enumerate(self.running) if id(job) in ended})
            self.running = [self.running[i] for i in order]

    def _step_aside(self) -> None:
        """When requests wait and no row is free, rows that ran ``quantum`` steps go to the back of the queue."""
        assert self.rows is not None  # noqa: S101 - set by _iterate
        if not self.plain_cache:  # rows of sliding-window or hybrid caches are not cut out and pasted back
            return
        with self.cond:
            waiting = sum(1 for j in self.queue if not j.cancelled())
        free = self.max_batch - len(self.running)
        if waiting <= free:
            return
        ripe = [i for i, j in enumerate(self.running) if j.steps >= self.quantum]
        ripe.sort(key=lambda i: -self.running[i].steps)  # the longest-running step aside first
        leaving = set(ripe[: waiting - free])
        if not leaving:
            return
        for i in sorted(leaving):
            self.running[i].saved = self.rows.take(i)
        aside = [self.running[i] for i in sorted(leaving)]
        order = self.rows.remove(leaving)
        self.running = [self.running[i] for i in order]
        with self.cond:
            self.queue.extend(aside)

    # -- endings ----------------------------------------------------------------------------------

    def _end_if_cancelled(self, job: Job) -> bool:
        if not job.cancelled():
            return False
        if job.saved is not None:
            self._finish(job, job.tokens, "cancelled")
        else:
            self._finish(job, [], "cancelled")
        return True

    def _finish(self, job: Job, tokens: list[int], finish: str) -> None:
        job.outcome = (tokens, finish)
        job.saved = None
        job.ended_at = self.step_count
        if job.streamer is not None:
            job.streamer.end()
        job.done.set()
        if job.on_end is not None:
            job.on_end(job)

    def _fail(self, jobs: list[Job], error: BaseException) -> None:
        for job in jobs:
            if not job.done.is_set():
                job.error = error
                job.saved = None
                if job.streamer is not None:
                    job.streamer.end()
                job.done.set()
                if job.on_end is not None:
                    job.on_end(job)


def _sampled(jobs: list[Job]) -> list[tuple[int, Any, Any]]:
    """The rows of *jobs* that draw their token (temperature > 0): index, options, generator."""
    return [(i, j.request.options, j.generator) for i, j in enumerate(jobs) if j.request.options.temperature]
