"""``TrainableModule.generate_async``: the engine's own thread wakes the awaiting coroutine.

No thread waits per request (the server awaits the engine directly), the answers
are those of ``generate``, and cancelling the awaiting task frees the row.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.trainable import TrainableModule

QUESTIONS = ["What is the sea?", "Tell me about cats", "hi", "Why is the sky blue?", "Count to ten", "Name a fruit"]


@pytest.fixture(scope="module", params=["in process", "engine process"])
def module(request: Any, tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    m = TrainableModule(
        tiny_model_path, name="tiny", max_batch_size=4, engine_process=request.param == "engine process"
    ).start()
    yield m
    m.stop()


def test_answers_equal_generate_alone_and_side_by_side(module: TrainableModule) -> None:
    requests = [module.prepare([{"role": "user", "content": q}], max_new_tokens=12) for q in QUESTIONS]
    expected = [module.generate(r) for r in requests]

    async def all_at_once() -> list[Any]:
        return list(await asyncio.gather(*(module.generate_async(r) for r in requests)))

    assert asyncio.run(all_at_once()) == expected
    assert asyncio.run(module.generate_async(requests[0])) == expected[0]


def _idle(module: TrainableModule) -> bool:
    engine = module._backend.batcher
    jobs = getattr(engine, "jobs", None)  # the engine process's jobs in flight
    return not jobs if jobs is not None else not engine.running and not engine.queue


def test_cancelling_the_awaiting_task_cancels_the_generation(module: TrainableModule) -> None:
    request = module.prepare([{"role": "user", "content": "Tell me a long story"}], max_new_tokens=1900)
    flag = threading.Event()

    async def give_up() -> None:
        task = asyncio.ensure_future(module.generate_async(request, flag))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(give_up())
    assert flag.is_set()
    deadline = time.monotonic() + 10
    while not _idle(module) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _idle(module)  # the row was freed long before its 1900 tokens


def test_a_stopped_module_raises_a_typed_error(tiny_model_path: Path) -> None:  # noqa: F811
    from modules.errors import ModelNotStartedError

    m = TrainableModule(tiny_model_path, max_batch_size=2, engine_process=False)
    request = m.prepare([{"role": "user", "content": "hi"}])
    with pytest.raises(ModelNotStartedError):
        asyncio.run(m.generate_async(request))


def test_the_server_awaits_the_engine_without_a_thread_per_request(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served = TrainableModule(tiny_model_path, name="tiny", max_new_tokens=6, max_batch_size=4).start(serve=True)
    try:
        body = {"model": "tiny", "messages": [{"role": "user", "content": "Tell me about the sea"}]}
        before = httpx.post(served.url + "/chat/completions", json=body, timeout=60).json()

        def blocked(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the server called the blocking generate()")

        monkeypatch.setattr(TrainableModule, "generate", blocked)
        after = httpx.post(served.url + "/chat/completions", json=body, timeout=60)
        assert after.status_code == 200
        assert after.json()["choices"] == before["choices"]
    finally:
        served.stop()
