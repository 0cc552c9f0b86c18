"""Behaviour: a stream cut at a stop string ends where the plain answer ends, and reports its usage.

A stream used to cut its text at a stop string in its consumer, which then set
the cancel flag; by the time the engine read it, it had generated a token or
more past the stop. The text was right, but ``usage.completion_tokens`` counted
the tokens nobody reads (2 where the plain answer said 1, or 6 against 2 over
HTTP), varied from run to run with thread timing, and the model spent those
steps for nothing. The engine now ends a streamed job at the token that
completes a stop string, as it does a plain one.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.trainable import TrainableModule

MESSAGES = [{"role": "user", "content": "Question number 45: tell me"}]
STOPS = ["e", "th"]


def _plain(module: TrainableModule) -> Any:
    return module.generate(module.prepare(MESSAGES, stop=STOPS, max_new_tokens=40))


def _thread_stream(module: TrainableModule) -> tuple[str, dict[str, int]]:
    usage: dict[str, int] = {}
    deltas = list(module.generate_stream(module.prepare(MESSAGES, stop=STOPS, max_new_tokens=40), usage=usage))
    return "".join(d.text for d in deltas), usage


def _loop_stream(module: TrainableModule) -> tuple[str, dict[str, int]]:
    async def go() -> tuple[str, dict[str, int]]:
        usage: dict[str, int] = {}
        source = module.stream_batches(
            module.prepare(MESSAGES, stop=STOPS, max_new_tokens=40), threading.Event(), usage
        )
        assert source is not None
        text = ""
        async for batch in source:
            text += "".join(d.text for d in batch)
        return text, usage

    return asyncio.run(go())


@pytest.mark.parametrize("engine_process", [False, True], ids=["loop-in-process", "engine-process"])
def test_a_stream_cut_at_a_stop_string_reports_the_plain_answers_usage(
    tiny_model_path: Path,  # noqa: F811
    engine_process: bool,
) -> None:
    module = TrainableModule(tiny_model_path, max_batch_size=4, engine_process=engine_process).start()
    try:
        plain = _plain(module)
        assert plain.finish_reason == "stop" and plain.usage["completion_tokens"] < 40  # the stop string was hit
        for _ in range(5):  # the old race lost most of the time; five tries make a pass by luck unlikely
            for text, usage in (_thread_stream(module), _loop_stream(module)):
                assert text == plain.text
                assert usage == plain.usage
    finally:
        module.stop()
