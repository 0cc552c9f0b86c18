"""TrainableModule's async calls: ``acall``, ``arespond``, ``astream`` on the tiny model.

They are the sync calls run on the module's async workers, so the answers are the same (greedy
decoding), the event loop keeps running while the model thinks, concurrent calls each get their
own answer, a cancelled stream stops its generation, and ``stop()`` ends the workers.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.errors import ModelNotStartedError
from modules.local.trainable import TrainableModule
from modules.online.response import Response

PROMPTS = ["hi", "Why is the sky blue?", "Count to three", "Name a colour", "2+2?", "Say yes", "Tell a joke", "ok"]


def _alive(prefix: str, before: set[threading.Thread], timeout: float = 3.0) -> list[str]:
    """Names of threads started since ``before`` whose name starts with ``prefix`` and that are still
    alive once each was given ``timeout`` seconds to end."""
    end = time.monotonic() + timeout
    for thread in set(threading.enumerate()) - before:
        if thread.name.startswith(prefix):
            thread.join(max(0.0, end - time.monotonic()))
    return [t.name for t in set(threading.enumerate()) - before if t.name.startswith(prefix) and t.is_alive()]


def test_async_answers_equal_the_sync_answers(started_module: TrainableModule) -> None:  # noqa: F811
    m = started_module

    async def main() -> tuple[object, Response, str]:
        pieces = [piece async for piece in m.astream("Why is the sky blue?")]
        return await m.acall("Why is the sky blue?"), await m.arespond("Why is the sky blue?"), "".join(pieces)

    called, responded, streamed = asyncio.run(main())
    assert called == m("Why is the sky blue?")
    sync = m.respond("Why is the sky blue?")
    assert isinstance(responded, Response) and responded == sync
    assert responded.usage is not None and responded.usage["completion_tokens"] > 0
    assert streamed == "".join(m.stream("Why is the sky blue?"))


def test_an_acall_never_blocks_the_event_loop(started_module: TrainableModule) -> None:  # noqa: F811
    ticks = 0

    async def ticker(stop: asyncio.Event) -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0)

    async def main() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(ticker(stop))
        await asyncio.sleep(0)  # the ticker has started
        first = ticks
        await started_module.acall("Tell me a story", max_new_tokens=16)
        stop.set()
        await task
        assert ticks > first + 1, "the loop did not run while the model generated"

    asyncio.run(main())


def test_concurrent_acalls_each_get_their_own_answer(started_module: TrainableModule) -> None:  # noqa: F811
    m = started_module
    expected = [m(p) for p in PROMPTS]

    async def main() -> list[object]:
        return list(await asyncio.gather(*(m.acall(p) for p in PROMPTS)))

    assert asyncio.run(main()) == expected


def test_cancelling_a_task_reading_an_astream_stops_its_generation(started_module: TrainableModule) -> None:  # noqa: F811
    m = started_module
    before = set(threading.enumerate())

    async def main() -> object:
        first = asyncio.Event()

        async def reader() -> None:
            async with m.astream("Tell me a long story", max_new_tokens=1900) as stream:
                async for _piece in stream:
                    first.set()

        task = asyncio.create_task(reader())
        started = asyncio.create_task(first.wait())
        await asyncio.wait([started, task], return_when=asyncio.FIRST_COMPLETED)
        if task.done():  # the stream failed before its first piece: show why
            started.cancel()
            task.result()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await m.acall("hi")  # the model is free again

    assert asyncio.run(main()) == m("hi")
    assert _alive("prompter-generate", before) == [], "the cancelled stream's generation kept running"
    assert m._backend.lock.acquire(timeout=1.0)
    m._backend.lock.release()


def test_bad_arguments_raise_typed_errors_at_the_await(started_module: TrainableModule) -> None:  # noqa: F811
    from modules.errors import ModuleConfigError

    async def main() -> None:
        with pytest.raises(ModuleConfigError, match="temprature"):
            await started_module.acall("hi", temprature=0.5)
        with pytest.raises(ModuleConfigError, match="temprature"):
            await started_module.arespond("hi", temprature=0.5)
        with pytest.raises(ModuleConfigError, match="temprature"):
            async for _ in started_module.astream("hi", temprature=0.5):
                pass

    asyncio.run(main())


def test_stop_ends_the_async_workers_and_a_later_call_is_a_typed_error(tiny_model_path: Path) -> None:  # noqa: F811
    before = set(threading.enumerate())
    m = TrainableModule(tiny_model_path, max_new_tokens=4).start()
    handle = m.share()

    async def work() -> None:
        await asyncio.gather(*(m.acall(p) for p in PROMPTS[:4]), handle.acall("hi"))
        async with m.astream("hi") as stream:
            async for _ in stream:
                pass

    asyncio.run(work())
    assert any(t.name.startswith("prompter-async") for t in threading.enumerate())
    m.stop()
    assert _alive("prompter-async", before) == [], "stop() left async workers running"
    assert _alive("prompter-generate", before) == []

    async def after() -> None:
        with pytest.raises(ModelNotStartedError):
            await handle.acall("hi")

    asyncio.run(after())
    m.stop()  # the call above started a worker again; stop() ends it too
    assert _alive("prompter-async", before) == []
