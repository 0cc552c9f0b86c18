"""The engine process's side of :class:`~modules.local.engines.process.ProcessEngine`: the decode loop, alone.

Started by :class:`~modules.local.engines.process.ProcessEngine` through
:func:`run_engine` (FD: its end of a socket pair, used as a ``multiprocessing``
``Connection``), it imports torch
and transformers, reads its :class:`EngineConfig`, loads the model from its
folder, runs a :class:`~modules.local.batching.Batcher` over it and talks to
the parent over that connection. Its Python thread shares no GIL with the HTTP
server, the tokenizer or the callers, which is the point: on a small model
most of a decoding step is Python, and sharing one GIL with a busy event loop
made each step several times slower (see :mod:`modules.local.engines.process`).

Messages (tuples, pickled by the pipe):

Only builtins cross (the parent may run our package under another name, ``prompter._modules``,
when an application has its own ``modules``: a pickled class of ours would not load on the other side).

* parent to engine: the :class:`EngineConfig` as a dict first, then
  ``("run", jid, input_ids, options as a dict, stop_strings, streamed)``,
  ``("cancel", jid)``, ``("stop",)``;
* engine to parent: ``("ready",)`` or ``("failed", message)`` once, then
  ``("tokens", [(jid, token), ...])`` after each step (streamed jobs only),
  ``("done", jid, ids, finish)`` and ``("error", jid, type name, message)``.
"""

from __future__ import annotations

import gc
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from modules.local.request import GenerationOptions, LocalRequest

__all__ = ["ENGINE_PROCESS_SUPPORTED", "EngineConfig", "main", "run_engine"]

ENGINE_PROCESS_SUPPORTED = os.name == "posix"
"""Whether this system can start the engine process (it inherits one end of a socket pair: POSIX only)."""


@dataclass(frozen=True)
class EngineConfig:
    """What the engine process needs to load the model and run the loop (picklable)."""

    path: str
    dtype: str
    device: str
    max_batch: int
    stop_ids: tuple[int, ...]
    torch_threads: int
    prefix_tokens: int = 0  # prompt tokens whose keys and values the loop keeps for reuse (0: none)


@dataclass
class _Backend:
    model: Any
    tokenizer: Any
    lock: Any = field(default_factory=threading.Lock)
    cancel_all: threading.Event = field(default_factory=threading.Event)


class _Engine:
    """The ``BatchedModule`` the Batcher serves here: the loaded model, the stop ids the parent computed."""

    def __init__(self, backend: _Backend, stop_ids: list[int]) -> None:
        self._backend = backend
        self.stop_ids = stop_ids

    def _stop_ids(self) -> list[int]:
        return self.stop_ids

    def _stop_strings(self, request: LocalRequest) -> tuple[str, ...]:  # pragma: no cover - jobs are built here
        return ()


class _Outbox:
    """Sends to the parent from any thread; tokens of streamed jobs wait for the end of the step."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.tokens: list[tuple[int, int]] = []

    def send(self, message: tuple[Any, ...]) -> None:
        with self.lock:
            self.conn.send(message)

    def flush(self) -> None:
        with self.lock:
            if self.tokens:
                tokens, self.tokens = self.tokens, []
                self.conn.send(("tokens", tokens))


class _Streamed:
    """A job's streamer here: each generated token goes to the parent with the step's others."""

    def __init__(self, jid: int, outbox: _Outbox) -> None:
        self.jid, self.outbox, self.prompt_seen = jid, outbox, False

    def put(self, value: Any) -> None:
        if not self.prompt_seen:  # the first put is the prompt; the parent's streamer was given it already
            self.prompt_seen = True
            return
        for token in value.reshape(-1).tolist():
            self.outbox.tokens.append((self.jid, int(token)))

    def end(self) -> None:
        pass


def main(conn: Any) -> None:
    """The engine process: load, say ready, then serve jobs until ``("stop",)`` or the parent goes away."""
    try:  # imported while the parent loads its own copy, before the configuration arrives
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises a typed error
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    try:
        config = EngineConfig(**conn.recv())
    except (EOFError, OSError):  # the parent's start() failed before configuring us
        return
    try:
        logging.disable_progress_bar()
        logging.set_verbosity_error()
        torch.set_num_threads(config.torch_threads)
        model = AutoModelForCausalLM.from_pretrained(
            config.path, local_files_only=True, dtype=getattr(torch, config.dtype)
        )
        model = model.to(config.device).eval()
        tokenizer = AutoTokenizer.from_pretrained(config.path, local_files_only=True)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises a typed error
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    _serve(conn, config, _Backend(model, tokenizer))


def _serve(conn: Any, config: EngineConfig, backend: _Backend) -> None:
    from modules.local.batching import Batcher, Job
    from modules.local.streaming import StopWatch

    outbox = _Outbox(conn)
    engine = _Engine(backend, list(config.stop_ids))
    batcher = Batcher(engine, config.max_batch, prefix_tokens=config.prefix_tokens)
    batcher.after_step = outbox.flush
    jobs: dict[int, Job] = {}

    def ended(jid: int, job: Job) -> None:
        jobs.pop(jid, None)
        outbox.flush()  # its last tokens go before its end
        if job.error is not None:
            outbox.send(("error", jid, type(job.error).__name__, str(job.error)))
        else:
            assert job.outcome is not None  # noqa: S101 - set together with done
            outbox.send(("done", jid, job.outcome[0], job.outcome[1]))

    batcher.reopen()
    # Everything loaded so far lives as long as the process: keep it out of the collector's full
    # passes, which otherwise stop every row for as long as they take to walk torch and transformers.
    gc.freeze()
    conn.send(("ready",))
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):  # the parent went away
                break
            kind = message[0]
            if kind == "run":
                _, jid, input_ids, options, stops, streamed = message
                request = _request(input_ids, GenerationOptions(**options))
                job = Job(request, threading.Event(), _Streamed(jid, outbox) if streamed else None)
                if stops and not streamed:
                    job.watch = StopWatch(backend.tokenizer, stops, set(engine.stop_ids))
                job.on_end = lambda job, jid=jid: ended(jid, job)
                jobs[jid] = job
                batcher.submit(job)
            elif kind == "cancel":
                target = jobs.get(message[1])
                if target is not None and target.cancel is not None:
                    target.cancel.set()
            elif kind == "stop":
                break
    finally:
        backend.cancel_all.set()
        batcher.stop()


def _request(input_ids: list[int], options: GenerationOptions) -> LocalRequest:
    return LocalRequest(messages=(), tools=None, text="", spans=(), input_ids=tuple(input_ids), options=options)


def run_engine(fd: int) -> None:
    """The engine process's entry point: serve the parent on the socket *fd* (see the module)."""
    import warnings
    from multiprocessing.connection import Connection

    warnings.filterwarnings("ignore", category=FutureWarning)  # transformers' renames, not ours to act on
    main(Connection(fd))


if __name__ == "__main__":
    import sys

    run_engine(int(sys.argv[1]))
