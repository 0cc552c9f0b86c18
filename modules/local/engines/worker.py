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
* engine to parent: ``("ready", torch threads, vocabulary size)`` or ``("failed", message)`` once, then after each pass
  of the loop that produced something, one ``("step", tokens, ends)``: ``tokens`` is
  ``[(jid, token), ...]`` (streamed jobs only), ``ends`` lists ``("done", jid, ids, finish)``
  and ``("error", jid, type name, message)`` (after the tokens: a job's last tokens come first).
  One message per pass, not one per ended job: at 64 rows a pass often ends several jobs, and
  each message costs a write on the engine's side and a read on the parent's.
"""

from __future__ import annotations

import gc
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from modules.local.engines import default_torch_threads
from modules.local.engines.admission import vocabulary_size
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
    torch_threads: int | None  # None: chosen once the model is loaded (default_torch_threads by its size)
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
    """What one pass of the loop produced (streamed tokens, ended jobs), sent to the parent at its end."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.tokens: list[tuple[int, int]] = []
        self.ends: list[tuple[Any, ...]] = []

    def flush(self) -> None:
        """Send the pass's tokens and endings as one message (called by the loop after each pass)."""
        with self.lock:
            if not (self.tokens or self.ends):
                return
            message = ("step", self.tokens, self.ends)
            self.tokens, self.ends = [], []
            try:
                self.conn.send(message)
            except (OSError, ValueError):  # the parent is gone: the reading loop sees it and stops us
                pass

    def refuse(self, jid: int, exc: BaseException) -> None:
        """End job *jid*, which never joined the loop, with *exc* (its own message: the loop's lists
        belong to the loop's thread)."""
        with self.lock:
            try:
                self.conn.send(("step", [], [("error", jid, type(exc).__name__, str(exc))]))
            except (OSError, ValueError):
                pass


class _Streamed:
    """A job's streamer here: each generated token goes to the parent with the step's others (the loop
    gives it ids as ints, :func:`~modules.local.streaming.stream_ids`, and no prompt)."""

    def __init__(self, jid: int, outbox: _Outbox) -> None:
        self.jid, self.outbox = jid, outbox

    def put_ids(self, ids: list[int]) -> None:
        """The loop's new ids for this job (ints: no tensor per token)."""
        jid, tokens = self.jid, self.outbox.tokens
        for token in ids:
            tokens.append((jid, int(token)))

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
        if config.torch_threads is not None:
            torch.set_num_threads(config.torch_threads)
        model = AutoModelForCausalLM.from_pretrained(
            config.path, local_files_only=True, dtype=getattr(torch, config.dtype)
        )
        model = model.to(config.device).eval()
        if config.torch_threads is None:
            torch.set_num_threads(default_torch_threads(parameters=sum(p.numel() for p in model.parameters())))
        tokenizer = AutoTokenizer.from_pretrained(config.path, local_files_only=True)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises a typed error
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    _serve(conn, config, _Backend(model, tokenizer))


class _Session:
    """The engine's side of the parent's connection: the loop, its outbox and the jobs by the parent's ids."""

    def __init__(self, conn: Any, config: EngineConfig, backend: _Backend) -> None:
        from modules.local.batching import Batcher, Job

        self.backend = backend
        self.outbox = _Outbox(conn)
        self.engine = _Engine(backend, list(config.stop_ids))
        self.batcher = Batcher(self.engine, config.max_batch, prefix_tokens=config.prefix_tokens)
        self.batcher.after_step = self.outbox.flush
        self.jobs: dict[int, Job] = {}

    def run(
        self, jid: int, input_ids: list[int], options: dict[str, Any], stops: tuple[str, ...], streamed: bool
    ) -> None:
        """Queue the parent's job *jid* (a ``("run", ...)`` message)."""
        from modules.local.batching import Job
        from modules.local.streaming import StopWatch

        request = _request(input_ids, GenerationOptions(**options))
        job = Job(request, threading.Event(), _Streamed(jid, self.outbox) if streamed else None)
        if stops:  # streamed or not: the job ends at the token that completes a stop string
            job.watch = StopWatch(self.backend.tokenizer, stops, set(self.engine.stop_ids))
        job.on_end = lambda job, jid=jid: self.ended(jid, job)
        self.jobs[jid] = job
        self.batcher.submit(job)

    def cancel(self, jid: int) -> None:
        target = self.jobs.get(jid)
        if target is not None and target.cancel is not None:
            target.cancel.set()

    def ended(self, jid: int, job: Any) -> None:
        """*job* ended (in the loop's thread, which flushes the outbox after the pass)."""
        self.jobs.pop(jid, None)
        if job.error is not None:
            self.outbox.ends.append(("error", jid, type(job.error).__name__, str(job.error)))
        else:
            assert job.outcome is not None  # noqa: S101 - set together with done
            self.outbox.ends.append(("done", jid, job.outcome[0], job.outcome[1]))


def _serve(conn: Any, config: EngineConfig, backend: _Backend) -> None:
    session = _Session(conn, config, backend)
    session.batcher.reopen()
    # Everything loaded so far lives as long as the process: keep it out of the collector's full
    # passes, which otherwise stop every row for as long as they take to walk torch and transformers.
    gc.freeze()
    conn.send(("ready", _threads(), vocabulary_size(backend.model)))
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):  # the parent went away
                break
            kind = message[0]
            if kind == "run":
                try:
                    session.run(*message[1:])
                except Exception as exc:  # noqa: BLE001 - that caller's error (the parent checked it already)
                    session.outbox.refuse(message[1], exc)
            elif kind == "cancel":
                session.cancel(message[1])
            elif kind == "stop":
                break
    finally:
        backend.cancel_all.set()
        session.batcher.stop()


def _threads() -> int:
    import torch

    return int(torch.get_num_threads())


def _request(input_ids: list[int], options: GenerationOptions) -> LocalRequest:
    return LocalRequest(messages=(), tools=None, text="", spans=(), input_ids=tuple(input_ids), options=options)


def run_engine(fd: int) -> None:
    """The engine process's entry point: serve the parent on the socket *fd* (see the module)."""
    import signal
    import warnings
    from multiprocessing.connection import Connection

    warnings.filterwarnings("ignore", category=FutureWarning)  # transformers' renames, not ours to act on
    # Ctrl-C in a terminal signals the whole process group: this process ends when its parent says so
    # or goes away (its socket closes), never by the terminal's SIGINT (it printed a traceback)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    main(Connection(fd))


if __name__ == "__main__":
    import sys

    run_engine(int(sys.argv[1]))
