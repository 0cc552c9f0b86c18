"""TrainableModule's async calls fail as its sync calls do, at the same moment, start no thread to fail, and stop when cancelled.

- On a stopped (or never started) module, ``acall``/``arespond``/``astream`` raise
  :class:`~modules.errors.ModelNotStartedError` as ``m(...)``/``m.respond(...)``/``m.stream(...)`` do,
  and leave no async worker thread behind (one used to start for the call and stay until the next ``stop()``).
- ``astream(...)`` with a wrong argument raises at the call, as ``stream(...)`` does (it used to wait
  for the first ``async for`` step); on a stopped module, a wrong argument's error comes first, as in sync.
- Cancelling the task awaiting ``acall``/``arespond`` stops its generation at the next token, as leaving an
  ``astream`` does (it used to run on to ``max_new_tokens``, holding its slot of the engine).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.errors import ModelNotStartedError, ModuleConfigError
from modules.local.trainable import TrainableModule


def _new_async_threads(before: set[threading.Thread], timeout: float = 3.0) -> list[str]:
    end = time.monotonic() + timeout
    for thread in set(threading.enumerate()) - before:
        if thread.name.startswith("prompter-async"):
            thread.join(max(0.0, end - time.monotonic()))
    return [t.name for t in set(threading.enumerate()) - before if t.name.startswith("prompter-async") and t.is_alive()]


async def _read(stream: Any) -> list[str]:
    return [piece async for piece in stream]


def _sync_error(call: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as info:  # noqa: PT011 - the type is compared with the async one's
        call()
    return info.value


@pytest.fixture(params=["never started", "stopped"])
def idle_module(request: pytest.FixtureRequest, tiny_model_path: Path) -> TrainableModule:  # noqa: F811
    m = TrainableModule(tiny_model_path, max_new_tokens=4)
    if request.param == "stopped":
        m.start()
        assert m("hi") is not None
        m.stop()
    return m


def test_async_calls_on_an_idle_module_raise_model_not_started_and_start_no_thread(
    idle_module: TrainableModule,
) -> None:
    m = idle_module
    before = set(threading.enumerate())

    async def main() -> None:
        with pytest.raises(ModelNotStartedError):
            await m.acall("hi")
        with pytest.raises(ModelNotStartedError):
            await m.arespond("hi")
        with pytest.raises(ModelNotStartedError):
            await _read(m.astream("hi"))
        with pytest.raises(ModelNotStartedError):
            await _read(m.share().astream("hi"))

    asyncio.run(main())
    assert _new_async_threads(before) == [], "a failed async call left a worker thread running"
    with pytest.raises(ModelNotStartedError):
        m.stream("hi")  # the sync stream refuses at the call too
    with pytest.raises(ModelNotStartedError):
        m.astream("hi")


def test_an_idle_module_reports_a_wrong_argument_first_in_async_as_in_sync(idle_module: TrainableModule) -> None:
    m = idle_module
    before = set(threading.enumerate())
    sync = _sync_error(lambda: m("hi", bogus=1))
    assert isinstance(sync, ModuleConfigError)

    async def main() -> None:
        with pytest.raises(ModuleConfigError, match="bogus"):
            await m.acall("hi", bogus=1)
        with pytest.raises(ModuleConfigError, match="bogus"):
            await m.arespond("hi", bogus=1)
        with pytest.raises(ModuleConfigError, match="bogus"):
            m.astream("hi", bogus=1)

    asyncio.run(main())
    assert _new_async_threads(before) == []


def test_astream_refuses_an_unknown_keyword_at_the_call_as_stream_does(
    started_module: TrainableModule,  # noqa: F811
) -> None:
    m = started_module
    sync = _sync_error(lambda: m.stream("hi", bogus=1))
    with pytest.raises(ModuleConfigError) as info:
        m.astream("hi", bogus=1)  # no iteration: the call itself refuses it
    assert type(info.value) is type(sync) and str(info.value) == str(sync)
    with pytest.raises(ModuleConfigError, match="temprature"):
        m.astream("hi", temprature=0.5)
    sync = _sync_error(lambda: m.stream("hi", history=[["only one"]]))
    with pytest.raises(type(sync)):
        m.astream("hi", history=[["only one"]])


def test_an_astream_made_before_stop_and_read_after_it_leaves_no_worker_behind(
    tiny_model_path: Path,  # noqa: F811
) -> None:
    m = TrainableModule(tiny_model_path, max_new_tokens=4).start()
    before = set(threading.enumerate())
    stream = m.astream("hi")  # started: accepted; its first step runs on a worker
    m.stop()
    with pytest.raises(ModelNotStartedError):
        asyncio.run(_read(stream))
    assert _new_async_threads(before) == [], "the stream's first step started a worker that outlived the model"


@pytest.mark.parametrize("method", ["acall", "arespond"])
def test_cancelling_an_async_call_stops_its_generation(tiny_model_path: Path, method: str) -> None:  # noqa: F811
    m = TrainableModule(tiny_model_path, max_new_tokens=600).start()
    ended: list[Any] = []
    done = threading.Event()
    generate = m.generate

    def recording_generate(request: Any, cancel: threading.Event | None = None) -> Any:
        try:
            ended.append(generate(request, cancel))
        finally:
            done.set()
        return ended[-1]

    m.generate = recording_generate  # type: ignore[method-assign]

    async def main() -> None:
        task = asyncio.create_task(getattr(m, method)("Tell me a long story"))
        while not m._backend.batcher.running:  # the generation has begun
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(main())
        assert done.wait(120), "the cancelled call's generation never ended"
        (completion,) = ended
        assert completion.finish_reason == "cancelled" and completion.usage["completion_tokens"] < 600
    finally:
        m.stop()
