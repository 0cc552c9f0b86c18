"""What the engine process sends its parent: one message per pass of the loop, whatever it ended.

At 64 rows a pass often ends several requests at once; a message per ended request
cost the engine (on the core that decodes) a write each, and the parent a read and a
wake-up each. The engine's session is driven here directly, over a recording connection,
on the real tiny model.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.engines.worker import EngineConfig, _Backend, _Session
from modules.local.request import GenerationOptions


class _Recorder:
    """A connection that keeps what is sent (and wakes a waiter on each send)."""

    def __init__(self) -> None:
        self.sent: list[tuple[Any, ...]] = []
        self.arrived: queue.Queue[tuple[Any, ...]] = queue.Queue()

    def send(self, message: tuple[Any, ...]) -> None:
        self.sent.append(message)
        self.arrived.put(message)


@pytest.fixture(scope="module")
def backend(tiny_model_path: Path) -> _Backend:  # noqa: F811
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_model_path).eval()
    return _Backend(model, AutoTokenizer.from_pretrained(tiny_model_path))


def _session(backend: _Backend, path: Path) -> tuple[_Session, _Recorder]:
    conn = _Recorder()
    config = EngineConfig(str(path), "float32", "cpu", max_batch=8, stop_ids=(), torch_threads=1)
    session = _Session(conn, config, backend)
    session.batcher.reopen()
    return session, conn


def _ends(conn: _Recorder, count: int) -> list[tuple[Any, ...]]:
    """Wait for *count* ended jobs; the messages that carried them."""
    seen, carriers = 0, []
    while seen < count:
        message = conn.arrived.get(timeout=60)
        assert message[0] == "step", message
        if message[2]:
            carriers.append(message)
            seen += len(message[2])
    return carriers


def test_jobs_that_end_in_the_same_pass_reach_the_parent_in_one_message(
    backend: _Backend,
    tiny_model_path: Path,  # noqa: F811
) -> None:
    session, conn = _session(backend, tiny_model_path)
    options = dataclasses.asdict(GenerationOptions(max_new_tokens=5))
    try:
        with session.batcher.cond:  # all three wait before the loop looks: they join, and end, together
            for jid in (1, 2, 3):
                session.run(jid, [5, 6, 7, 8], options, (), False)
        carriers = _ends(conn, 3)
    finally:
        session.batcher.stop()
    assert len(carriers) == 1, f"3 jobs ended in one pass but reached the parent in {len(carriers)} messages"
    ends = carriers[0][2]
    assert sorted(e[1] for e in ends) == [1, 2, 3]
    assert all(e[0] == "done" and len(e[2]) == 5 and e[3] == "length" for e in ends)


def test_a_streamed_jobs_tokens_come_before_its_end(backend: _Backend, tiny_model_path: Path) -> None:  # noqa: F811
    session, conn = _session(backend, tiny_model_path)
    options = dataclasses.asdict(GenerationOptions(max_new_tokens=4))
    try:
        session.run(7, [9, 10, 11], options, (), True)
        _ends(conn, 1)
    finally:
        session.batcher.stop()
    streamed = [token for m in conn.sent for jid, token in m[1] if jid == 7]
    (done,) = [e for m in conn.sent for e in m[2]]
    assert done[:2] == ("done", 7) and streamed == list(done[2])
    last_tokens = max(i for i, m in enumerate(conn.sent) if m[1])
    assert last_tokens <= next(i for i, m in enumerate(conn.sent) if m[2])


def test_an_engine_error_reaches_the_parent_as_an_error_end(backend: _Backend, tiny_model_path: Path) -> None:  # noqa: F811
    session, conn = _session(backend, tiny_model_path)
    options = dataclasses.asdict(GenerationOptions(max_new_tokens=4))
    try:
        backend.cancel_all.set()  # what stop() of the parent's module does: the loop fails its jobs
        session.run(3, [9, 10, 11], options, (), False)
        (message,) = _ends(conn, 1)
    finally:
        backend.cancel_all.clear()
        session.batcher.stop()
    (end,) = message[2]
    assert end[0] == "error" and end[1] == 3 and end[2] == "ServerStoppedError"


def test_a_gone_parent_does_not_kill_the_loop(backend: _Backend, tiny_model_path: Path) -> None:  # noqa: F811
    """A send that fails (the parent closed its end) is dropped; the loop goes on to the next pass."""
    session, conn = _session(backend, tiny_model_path)
    calls: list[int] = []

    def broken(message: tuple[Any, ...]) -> None:
        calls.append(1)
        raise BrokenPipeError(32, "Broken pipe")

    conn.send = broken  # type: ignore[method-assign]
    options = dataclasses.asdict(GenerationOptions(max_new_tokens=3))
    try:
        session.run(1, [5, 6], options, (), False)
        job = session.jobs.get(1)
        for _ in range(200):
            if not session.jobs:
                break
            threading.Event().wait(0.05)
        assert not session.jobs and calls
        assert session.batcher.worker is not None and session.batcher.worker.is_alive()
    finally:
        session.batcher.stop()
    assert job is None or job.done.is_set()
