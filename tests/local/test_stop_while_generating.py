"""stop() with a request already generating: the request is told it was stopped while generating,
not that it never ran (a request still waiting is told that it never ran)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.errors import ServerStoppedError
from modules.local.trainable import TrainableModule


class _HoldsTheFirstToken:
    """A streamer that, at the first generated token, says so and waits for ``stop()`` to begin."""

    def __init__(self, stopping: threading.Event) -> None:
        self.stopping, self.generating, self.puts = stopping, threading.Event(), 0

    def put(self, value: Any) -> None:
        self.puts += 1
        if self.puts > 1:  # the first put is the prompt
            self.generating.set()
            self.stopping.wait(30)

    def end(self) -> None:
        self.generating.set()


def test_a_request_generating_when_stop_runs_is_told_it_was_stopped_while_generating(
    tiny_model_path: Path,  # noqa: F811
) -> None:
    module = TrainableModule(tiny_model_path, engine_process=False).start()
    request = module.prepare([{"role": "user", "content": "Tell me a long story"}], max_new_tokens=1900)
    streamer = _HoldsTheFirstToken(module._backend.cancel_all)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            module._run(request, None, streamer)
        except BaseException as exc:  # noqa: BLE001 - inspected below
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    assert streamer.generating.wait(30)
    module.stop()
    caller.join(30)
    assert not caller.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], ServerStoppedError)
    assert "while this request was generating" in str(errors[0])
    assert "before this request ran" not in str(errors[0])


def test_a_request_sent_after_stop_is_told_it_never_ran(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, engine_process=False).start()
    request = module.prepare([{"role": "user", "content": "hi"}], max_new_tokens=3)
    module.stop()
    with pytest.raises(ServerStoppedError, match="before this request ran"):
        module._backend.batcher.submit(_job(module, request))


def _job(module: TrainableModule, request: Any) -> Any:
    from modules.local.batching import new_job

    return new_job(module, request, None, None)
