"""Batching concurrent greedy requests into one left-padded ``generate`` call.

With ``TrainableModule(max_batch_size=N)`` above 1, greedy requests that arrive
while the model is busy wait in a :class:`Batcher`, which runs up to ``N`` of
them together; each row still stops, streams and is cancelled on its own.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from modules.errors import ModelNotStartedError, ServerStoppedError
from modules.local.request import LocalRequest

__all__ = ["BatchedModule", "Batcher", "Job"]


class BatchedModule(Protocol):
    """What a :class:`Batcher` uses of the module it serves (``TrainableModule``).

    ``_backend`` holds the loaded ``model``, its ``tokenizer``, the ``lock``
    that serialises generation and the ``cancel_all`` event set by ``stop()``.
    """

    @property
    def _backend(self) -> Any: ...

    def _stop_ids(self) -> list[int]: ...


@dataclass
class Job:
    """One greedy request waiting for (or inside) a batch."""

    request: LocalRequest
    cancel: threading.Event | None
    streamer: Any
    tokens: list[int] = field(default_factory=list)
    finished: bool = False
    outcome: tuple[list[int], str] | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()


class Batcher:
    """Runs greedy requests that wait at the same time as one left-padded ``generate`` call.

    Callers block in :meth:`run`; one worker thread takes whatever is queued
    (up to ``max_batch`` jobs) each time the model is free, so a lone request
    starts at once and a crowd is served in batches. Each row stops on its own
    (its eos, its ``max_new_tokens``, its cancel flag); its tokens stream to its
    own streamer as they are generated.
    """

    def __init__(self, module: BatchedModule, max_batch: int) -> None:
        self.module = module
        self.max_batch = max_batch
        self.queue: list[Job] = []
        self.cond = threading.Condition()
        self.worker: threading.Thread | None = None
        self.closing = False

    def stop(self, timeout: float = 2.0) -> None:
        """End the worker thread (after the batch it runs, which the module's ``cancel_all`` cuts short)."""
        with self.cond:
            self.closing = True
            worker = self.worker
            self.cond.notify_all()
        if worker is not None and worker is not threading.current_thread():
            worker.join(timeout)

    def reopen(self) -> None:
        """Accept work again after :meth:`stop` (``start()`` calls this)."""
        with self.cond:
            self.closing = False

    def run(self, job: Job) -> tuple[list[int], str]:
        with self.cond:
            self.queue.append(job)
            if self.closing:
                self.queue.remove(job)
                raise ServerStoppedError("the model was stopped before this request ran")
            if self.worker is None or not self.worker.is_alive():
                self.worker = threading.Thread(target=self._loop, name="prompter-batcher", daemon=True)
                self.worker.start()
            self.cond.notify()
        job.done.wait()
        if job.error is not None:
            raise job.error
        assert job.outcome is not None  # noqa: S101 - set together with done
        return job.outcome

    def _loop(self) -> None:
        while True:
            with self.cond:
                if not self.cond.wait_for(lambda: bool(self.queue) or self.closing, timeout=30) or (
                    self.closing and not self.queue
                ):
                    self.worker = None  # idle or stopped: let the thread end; run() starts another
                    return
                jobs, self.queue = self.queue[: self.max_batch], self.queue[self.max_batch :]
            try:
                self._run_batch(jobs)
            except BaseException as exc:  # noqa: BLE001 - every waiting caller gets it
                for job in jobs:
                    if not job.done.is_set():
                        job.error = exc
                        if job.streamer is not None:
                            job.streamer.end()
                        job.done.set()

    def _run_batch(self, jobs: list[Job]) -> None:
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList
        from transformers.generation.streamers import BaseStreamer

        module, b = self.module, self.module._backend
        stop_ids = set(module._stop_ids())
        with b.lock:
            if b.model is None:
                error: BaseException = (
                    ServerStoppedError("the model was stopped before this request ran")
                    if b.cancel_all.is_set()
                    else ModelNotStartedError(f"{module!r}: call start() before generating")
                )
                raise error
            live = []
            for job in jobs:
                if b.cancel_all.is_set():
                    raise ServerStoppedError("the model was stopped before this request ran")
                if job.cancelled():
                    self._finish(job, [], "cancelled")
                else:
                    live.append(job)
            if not live:
                return
            pad = b.tokenizer.pad_token_id if b.tokenizer.pad_token_id is not None else min(stop_ids)
            width = max(len(j.request.input_ids) for j in live)
            rows = [[pad] * (width - len(j.request.input_ids)) + list(j.request.input_ids) for j in live]
            mask = [[0] * (width - len(j.request.input_ids)) + [1] * len(j.request.input_ids) for j in live]
            input_ids = torch.tensor(rows, dtype=torch.long, device=b.model.device)
            attention_mask = torch.tensor(mask, dtype=torch.long, device=b.model.device)

            def settle(job: Job) -> None:
                if not job.finished and (
                    (job.tokens and job.tokens[-1] in stop_ids)
                    or len(job.tokens) >= job.request.options.max_new_tokens
                    or job.cancelled()
                    or b.cancel_all.is_set()
                ):
                    job.finished = True

            class _Rows(StoppingCriteria):  # per row: its own length, cancel flag and eos
                def __call__(self, ids: Any, scores: Any, **kwargs: Any) -> Any:
                    for job in live:
                        settle(job)
                    return torch.tensor([job.finished for job in live], dtype=torch.bool, device=ids.device)

            class _Fanout(BaseStreamer):  # hands each row's new token to that row's caller
                def __init__(self) -> None:
                    self.prompt_seen = False

                def put(self, value: Any) -> None:
                    if not self.prompt_seen:
                        self.prompt_seen = True
                        return
                    for i, job in enumerate(live):
                        if job.finished:
                            continue
                        token = int(value.reshape(-1)[i])
                        job.tokens.append(token)
                        if job.streamer is not None:
                            job.streamer.put(torch.tensor([token]))

                def end(self) -> None:
                    pass

            for job in live:
                if job.streamer is not None:  # its first put is the prompt, which it skips
                    job.streamer.put(torch.tensor([list(job.request.input_ids)]))
            with torch.inference_mode():
                b.model.generate(
                    input_ids,
                    attention_mask=attention_mask,
                    max_new_tokens=max(j.request.options.max_new_tokens for j in live),
                    eos_token_id=sorted(stop_ids) or None,
                    pad_token_id=pad,
                    do_sample=False,
                    temperature=None,
                    top_p=None,
                    top_k=None,
                    stopping_criteria=StoppingCriteriaList([_Rows()]),
                    streamer=_Fanout(),
                )
        for job in live:
            tokens = job.tokens[: job.request.options.max_new_tokens]
            if tokens and tokens[-1] in stop_ids:
                self._finish(job, tokens[:-1], "stop")
            elif b.cancel_all.is_set():
                job.error = ServerStoppedError("the model was stopped while generating")
                self._finish(job, tokens, "cancelled")
            elif job.cancelled():
                self._finish(job, tokens, "cancelled")
            else:
                self._finish(job, tokens, "length" if len(tokens) >= job.request.options.max_new_tokens else "stop")

    @staticmethod
    def _finish(job: Job, tokens: list[int], finish: str) -> None:
        job.outcome = (tokens, finish)
        if job.streamer is not None:
            job.streamer.end()
        job.done.set()
