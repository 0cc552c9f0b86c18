"""A raw-text request (``/v1/completions``) streams the same text as its plain answer, tool-call markup included.

``prepare_text`` requests have no chat and no tools: the plain answer returns the
model's text as it is. Both streaming paths (a thread per stream, and the event
loop's ``stream_batches`` that the server uses) parsed the family's tool-call
syntax anyway: the markup vanished from the streamed text and the stream ended
with ``finish_reason: "tool_calls"`` (no value ``/v1/completions`` has) where the
plain answer said ``"length"``.

The generated pieces are scripted (a random-weight model cannot be made to write
a tool call); the tokenizer, the request building and both cutters are real.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.base import StreamDelta
from modules.local.stream_async import stream_batches
from modules.local.trainable import TrainableModule

PIECES = ["Call ", "<tool_call>", '\n{"name": "f", "arguments": {}}', "\n</tool_call>", " done"]
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]


@pytest.fixture(scope="module")
def module(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    m = TrainableModule(tiny_model_path).start()
    yield m
    m.stop()


def _threaded(m: TrainableModule, request: Any, ids: list[int]) -> list[StreamDelta]:
    ended = threading.Thread(target=lambda: None)
    ended.start()
    outcome = {"ids": ids, "finish": "length"}
    return list(m._stream_deltas(request, iter(PIECES), ended, threading.Event(), outcome, None))


def _on_the_loop(m: TrainableModule, request: Any, ids: list[int]) -> list[StreamDelta]:
    def submit(job: Any) -> None:  # the engine's side, scripted: the pieces, then the end
        for piece in PIECES:
            job.streamer.on_text(piece)
        job.outcome = (ids, "length")
        job.on_end(job)

    async def collect() -> list[StreamDelta]:
        return [d async for batch in stream_batches(m, submit, request, threading.Event(), None) for d in batch]

    return asyncio.run(collect())


@pytest.mark.parametrize("path", [_threaded, _on_the_loop], ids=["threaded", "event-loop"])
def test_a_raw_text_stream_keeps_tool_call_markup_as_its_plain_answer_does(module: TrainableModule, path: Any) -> None:
    request = module.prepare_text("write a tool call:")
    ids = module._load_tokenizer().encode("".join(PIECES))
    plain = module._answer(ids, "length", request)
    assert plain.text == "".join(PIECES) and not plain.tool_calls
    deltas = path(module, request, ids)
    assert "".join(d.text for d in deltas) == plain.text
    assert deltas[-1].finish_reason == plain.finish_reason == "length"
    assert not any(d.tool_calls for d in deltas)


@pytest.mark.parametrize("path", [_threaded, _on_the_loop], ids=["threaded", "event-loop"])
def test_a_chat_stream_with_tools_still_parses_tool_calls(module: TrainableModule, path: Any) -> None:
    request = module.prepare([{"role": "user", "content": "call f"}], tools=TOOLS)
    ids = module._load_tokenizer().encode("".join(PIECES))
    deltas = path(module, request, ids)
    assert "<tool_call>" not in "".join(d.text for d in deltas)
    assert deltas[-1].finish_reason == "tool_calls" and deltas[-1].tool_calls[0]["function"]["name"] == "f"


@pytest.mark.parametrize("path", [_threaded, _on_the_loop], ids=["threaded", "event-loop"])
def test_a_chat_without_tools_has_no_tool_calls_streamed_or_not(module: TrainableModule, path: Any) -> None:
    """As OpenAI's API: no tools offered (or ``tool_choice="none"``, which the server sends as none), no
    ``tool_calls`` and no ``finish_reason: "tool_calls"``; text that looks like a call stays text."""
    request = module.prepare([{"role": "user", "content": "call f"}])
    ids = module._load_tokenizer().encode("".join(PIECES))
    plain = module._answer(ids, "stop", request)
    assert plain.text == "".join(PIECES) and not plain.tool_calls and plain.finish_reason == "stop"
    deltas = path(module, request, ids)
    assert "".join(d.text for d in deltas) == plain.text
    assert not any(d.tool_calls for d in deltas)
