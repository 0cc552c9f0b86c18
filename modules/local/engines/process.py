"""Continuous batching in its own process: the decode loop never waits for the GIL of the server or the callers.

``TrainableModule(path, max_batch_size=N)`` with N > 1 (and ``prompter serve``,
batched or not) runs its decode loop (:class:`~modules.local.batching.Batcher`)
in an engine process, :mod:`modules.local.engines.worker`, unless
``engine_process=False``. It is a fresh interpreter running that module with
this package's folder first on its path: the caller's script is never imported
again (no ``if __name__ == "__main__"`` guard needed), and an application's own
``modules`` package cannot shadow ours there. Everything else stays in the caller's process:
rendering and safe tokenization, stop strings, streaming text, tool-call
parsing, the HTTP server. Only token ids and options cross the socket pair.

Why: on a small model most of a decoding step is Python (transformers' layers,
the batch's bookkeeping), and PyTorch releases the GIL inside every operator.
With the loop in the server's process, each release let the event loop take the
GIL, and the loop then waited for it back, hundreds of times a step. Measured
2026-11-26 on 2 cores, tiny model, 64 tokens per answer, 64 clients over HTTP
in another process: a step took 4.4 ms there against 1.0-1.5 ms for the same
rows alone, while the server process used only 65% of a core.

The weights live in the engine process only: the caller's process holds a
:class:`WeightsElsewhere` in the model's place (the generation config, for the
stop ids) and loads its own copy only if something needs the weights there
(``score()``, ``text_logprobs()``, the server's scoring endpoint). Greedy answers
are the same ids as in process (the same loop, the same model); a sampled
request with a ``seed`` draws the same tokens; without a seed it draws from the
engine process's own random state.

Cancelling: the caller's cancel flag (a client that left, a stop string seen by
the stream) is checked by one thread every few milliseconds and forwarded; the
engine then ends the row at its next step, as in process.
"""

from __future__ import annotations

import dataclasses
import itertools
import subprocess
import threading
from pathlib import Path
from typing import Any

from modules.errors import ModelNotStartedError, ModuleConfigError, ServerStoppedError
from modules.local.engines.admission import checked_request
from modules.local.engines.worker import EngineConfig
from modules.local.streaming import open_stream, stream_ids

__all__ = ["ProcessEngine", "WeightsElsewhere"]

_ROOT = str(Path(__file__).resolve().parents[3])
"""The folder that holds this ``modules`` package: the engine process imports it from there, first."""

_BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from modules.local.engines.worker import run_engine; run_engine(int(sys.argv[2]))"
)
"""The engine process's program: our folder first on ``sys.path``, so an application's own ``modules``
package (in the working folder, which ``-c`` puts on the path) cannot stand in for ours."""

_POLL_S = 0.005
"""How often the cancel flags of running jobs are checked (seconds)."""


class ProcessEngine:
    """The :class:`~modules.local.engines.Engine` that runs a Batcher in a child process (see the module)."""

    def __init__(self, cancel_all: threading.Event, start_timeout: float = 300.0) -> None:
        self.config: EngineConfig | None = None  # set by the module once its tokenizer and model are loaded
        self.cancel_all = cancel_all  # set by the module's stop(): every job ends at once
        self.start_timeout = start_timeout
        self.process: Any = None
        self.conn: Any = None
        self.ready = False
        self.threads: int | None = None  # the PyTorch threads the process decodes on (it says so when ready)
        self.vocabulary: int | None = None  # the token ids its model takes (it says so when ready)
        self.gone: ServerStoppedError | None = None  # set when the process died under us
        self.send_lock = threading.Lock()
        self.jobs: dict[int, Any] = {}
        self.cancelled: set[int] = set()
        self.ids = itertools.count()
        self.closing = threading.Event()
        self.reader: threading.Thread | None = None
        self.poller: threading.Thread | None = None
        self.life = threading.Lock()  # one of reopen, stop, restart at a time

    # -- lifecycle --------------------------------------------------------------------------------

    def spawn(self) -> None:
        """Start the engine process now (it imports torch and transformers while the caller loads too)."""
        if self.process is not None and self.process.poll() is None:
            return
        import socket
        import sys
        from multiprocessing.connection import Connection

        ours, theirs = socket.socketpair()
        argv = [sys.executable, "-c", _BOOTSTRAP, _ROOT, str(theirs.fileno())]
        try:  # whatever it prints goes to our stderr: our stdout may be a protocol ("serving at ...")
            out = sys.stderr.fileno()
        except (AttributeError, OSError, ValueError):
            out = None
        self.process = subprocess.Popen(argv, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=out)
        theirs.close()
        self.conn = Connection(ours.detach())
        self.ready = False

    def reopen(self) -> None:
        """Give the engine process its :attr:`config` (spawning it first if needed); wait until its model is loaded."""
        with self.life:
            self._open()

    def _open(self) -> None:
        if self.config is None:
            raise ModuleConfigError("the engine process has no configuration: start() the module")
        self.spawn()
        if self.ready:
            return
        process, parent = self.process, self.conn
        try:
            parent.send(dataclasses.asdict(self.config))
        except OSError:
            pass  # it died already: its exit code is read below
        if not parent.poll(self.start_timeout):
            self._discard()
            raise ModuleConfigError(f"the engine process did not load {self.config.path!r} in {self.start_timeout}s")
        try:
            first = parent.recv()
        except (EOFError, OSError):  # it died loading (killed, out of memory, crashed): not the folder's fault
            try:
                code = process.wait(5)
            except subprocess.TimeoutExpired:  # its end of the socket closed, the process lingers
                code = None
            self._discard()
            raise ModuleConfigError(
                f"the engine process exited with code {code} while loading {self.config.path!r}, before it was "
                "ready (killed, or out of memory?); start() the module again"
            ) from None
        if first[0] != "ready":
            self._discard()
            raise ModuleConfigError(
                f"{self.config.path!r} is not a model folder transformers can load (config.json and weights): "
                f"{first[1]} (in the engine process)"
            )
        self.threads = first[1] if len(first) > 1 else None  # the PyTorch threads it decodes on
        self.vocabulary = first[2] if len(first) > 2 else None
        self.ready = True
        self.gone = None
        self.closing.clear()
        self.reader = threading.Thread(target=self._read, name="prompter-engine-reader", daemon=True)
        self.reader.start()
        if self.poller is None or not self.poller.is_alive():
            self.poller = threading.Thread(target=self._poll_cancels, name="prompter-engine-cancels", daemon=True)
            self.poller.start()

    def _discard(self) -> None:
        """Kill a process that failed to start and forget it."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
        if self.conn is not None:
            self.conn.close()
        self.process = self.conn = None
        self.ready = False

    def stop(self, timeout: float = 2.0) -> None:
        """End the engine process; jobs still running end with :class:`~modules.errors.ServerStoppedError`."""
        self.closing.set()  # a restart under way gives up
        with self.life:
            self._close(timeout)

    def _close(self, timeout: float) -> None:
        process, conn = self.process, self.conn
        if process is None:
            return
        if not self.ready:  # spawned, never configured (start() failed before): nothing runs there
            self._discard()
            return
        self.closing.set()
        try:
            self._send(("stop",))
        except (OSError, ValueError):
            pass
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)
        conn.close()
        self.process = self.conn = None
        self.ready = False
        self._fail_all(ServerStoppedError("the model was stopped before this request ended"))

    # -- jobs -------------------------------------------------------------------------------------

    def run(self, job: Any) -> tuple[list[int], str]:
        """Send *job* to the engine process and wait for its ids and finish reason (tokens stream meanwhile)."""
        self.submit(job)
        job.done.wait()
        if job.error is not None:
            raise job.error
        assert job.outcome is not None  # noqa: S101 - set together with done
        return job.outcome  # type: ignore[no-any-return]

    def submit(self, job: Any) -> None:
        """Send *job* to the engine process and return at once; when it ends, its outcome (or error) is set,
        then ``job.done``, then ``job.on_end(job)`` is called in this engine's reader thread.

        A request the engine cannot run raises :class:`~modules.errors.ModuleConfigError` here, and
        only builtins are sent (a caller's ``str`` subclass would not unpickle in the engine process)."""
        request = checked_request(job.request, self.vocabulary)
        if not self.ready or self.closing.is_set() or self.cancel_all.is_set():
            raise self.gone or ServerStoppedError("the model was stopped before this request ran")
        jid = next(self.ids)
        stops = tuple(str.__str__(s) for s in job.watch.matcher.stops) if job.watch is not None else ()
        if job.streamer is not None:
            open_stream(job.streamer, request.input_ids)
        self.jobs[jid] = job
        try:
            if self.gone is not None:  # after registering: either this sees it, or the reader fails the job
                raise OSError
            options = dataclasses.asdict(request.options)
            self._send(("run", jid, list(request.input_ids), options, stops, job.streamer is not None))
        except (OSError, ValueError):
            if self.jobs.pop(jid, None) is not None:
                raise (self.gone or ServerStoppedError("the engine process is gone")) from None
        except BaseException:  # it was not sent: nothing will end it
            self.jobs.pop(jid, None)
            raise

    def _send(self, message: tuple[Any, ...]) -> None:
        with self.send_lock:
            self.conn.send(message)

    def _read(self) -> None:
        conn = self.conn
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message[0] == "step":
                self._take_step(message[1], message[2])
        if not self.closing.is_set():
            process = self.process
            code = process.wait(5) if process is not None else None
            self.gone = ServerStoppedError(
                f"the engine process ended unexpectedly (exit code {code}); a new one is starting: retry shortly"
            )
            self._fail_all(self.gone)
            threading.Thread(target=self._restart, name="prompter-engine-restart", daemon=True).start()

    def _take_step(self, tokens: list[tuple[int, int]], ends: list[tuple[Any, ...]]) -> None:
        """One pass of the engine's loop: stream its tokens, then end the jobs it ended."""
        jobs = self.jobs
        for jid, token in tokens:  # no torch call here (see _TokenStreamer.put_ids)
            job = jobs.get(jid)
            if job is not None and job.streamer is not None:
                stream_ids(job.streamer, [token])
        for kind, jid, *rest in ends:
            job = jobs.pop(jid, None)
            self.cancelled.discard(jid)
            if job is None:
                continue
            if kind == "done":
                job.outcome = (list(rest[0]), rest[1])
            else:
                job.error = _error(rest[0], rest[1])
            _end(job)

    def _restart(self) -> None:
        """Start a new engine process after one died (its requests failed; the next ones run here)."""
        with self.life:
            if self.closing.is_set():
                return
            self.ready = False
            if self.conn is not None:
                self.conn.close()
            self.process = self.conn = None
            try:
                self._open()
            except Exception as exc:  # noqa: BLE001 - kept for the callers: the module must be restarted
                self.gone = ServerStoppedError(
                    f"the engine process ended unexpectedly and a new one failed to start ({exc}); "
                    "stop() and start() the module again"
                )

    def _poll_cancels(self) -> None:
        while not self.closing.wait(_POLL_S):
            if self.cancel_all.is_set():
                for jid in list(self.jobs):
                    self._forward_cancel(jid)
                self._fail_all(ServerStoppedError("the model was stopped before this request ended"))
                continue
            for jid, job in list(self.jobs.items()):
                if job.cancel is not None and job.cancel.is_set():
                    self._forward_cancel(jid)

    def _forward_cancel(self, jid: int) -> None:
        if jid in self.cancelled:
            return
        self.cancelled.add(jid)
        try:
            self._send(("cancel", jid))
        except (OSError, ValueError, AttributeError):  # the process is gone: its reader fails the jobs
            pass

    def _fail_all(self, error: BaseException) -> None:
        for jid in list(self.jobs):
            job = self.jobs.pop(jid, None)
            if job is not None and not job.done.is_set():
                job.error = error
                _end(job)


def _end(job: Any) -> None:
    """Tell *job*'s waiters it has ended (its outcome or error is set): its streamer, ``done``, ``on_end``."""
    if job.streamer is not None:
        job.streamer.end()
    job.done.set()
    if job.on_end is not None:
        job.on_end(job)


def _error(kind: str, message: str) -> BaseException:
    """The caller's error for a request the engine process ended with *kind* (an exception's type name)."""
    if kind == "ServerStoppedError":
        return ServerStoppedError(message)
    if kind == "ModelNotStartedError":
        return ModelNotStartedError(message)
    if kind == "ModuleConfigError":
        return ModuleConfigError(message)
    return RuntimeError(f"the engine process failed on this request: {kind}: {message}")


class WeightsElsewhere:
    """The caller's stand-in for a model whose weights are in the engine process.

    It has the model's ``generation_config`` (read from the folder as transformers
    reads it on load: ``generation_config.json``, else derived from ``config.json``)
    and :meth:`load` for the few uses that need the weights in this process; the
    first such use loads them (once).
    """

    def __init__(self, path: str, dtype: str, device: str) -> None:
        from transformers import AutoConfig, GenerationConfig

        self.path, self.dtype, self.device = path, dtype, device
        self.lock = threading.Lock()
        self.loaded: Any = None
        try:
            try:
                self.generation_config = GenerationConfig.from_pretrained(path, local_files_only=True)
            except OSError:  # no generation_config.json: transformers derives it from config.json
                config = AutoConfig.from_pretrained(path, local_files_only=True)
                self.generation_config = GenerationConfig.from_model_config(config)
        except (OSError, ValueError) as exc:
            raise ModuleConfigError(
                f"{path!r} is not a model folder transformers can load (config.json and weights): {exc}"
            ) from exc

    def load(self) -> Any:
        """The model itself, loaded in this process on first use."""
        with self.lock:
            if self.loaded is None:
                import torch
                from transformers import AutoModelForCausalLM

                model = AutoModelForCausalLM.from_pretrained(
                    self.path, local_files_only=True, dtype=getattr(torch, self.dtype)
                )
                self.loaded = model.to(self.device).eval()
            return self.loaded
