"""A model answer with a tool-call block nested too deep to read stays text; it never crashes the request.

A model (steered by a prompt injection, say) that writes ``<tool_call>[[[[...`` a
thousand levels deep made the JSON reader raise a bare RecursionError: the
in-process answer and both stream paths raised it and the server turned a
non-streaming chat request with tools into a 500 ``server_error``. A block too deep to
read is not a call: it is left in the text like any other block that is not
valid JSON. A caller's own tool-call ``arguments`` nested that deep is a typed
error naming the field.

The answers are scripted (a random-weight model cannot be made to write them);
the tokenizer, the request building, the parsers and the server are real.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.base import StreamDelta
from modules.local.stream_async import stream_batches
from modules.local.tool_calls import json_prefix, parse_tool_calls
from modules.local.trainable import TrainableModule
from prompter.errors import MessageError

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
DEEP = "[" * 100_000
SYNTAXES = [
    ("<tool_call>", "</tool_call>"),
    ("[TOOL_CALLS]", None),
    ("<|tool_call|>", None),
    ("<|python_tag|>", None),
]


@pytest.fixture(scope="module")
def module(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    m = TrainableModule(tiny_model_path, name="tiny", max_new_tokens=2).start(serve=True)
    yield m
    m.stop()


@pytest.mark.parametrize("depth", [1_000, 100_000])
@pytest.mark.parametrize(("start", "end"), SYNTAXES, ids=[s for s, _ in SYNTAXES])
def test_a_too_deep_block_stays_text(start: str, end: str | None, depth: int) -> None:
    answer = "Sure." + start + "[" * depth + '{"name": "f", "arguments": {}}' + "]" * depth + (end or "")
    assert parse_tool_calls(answer, start, end) == (answer, [])
    assert json_prefix("{" + '"a":[' * depth) is None


def test_a_too_deep_block_beside_a_good_one_leaves_the_good_call() -> None:
    good = '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'
    bad = "<tool_call>" + DEEP + "</tool_call>"
    text, calls = parse_tool_calls("A" + bad + good)
    assert text == "A" + bad and [c["function"]["name"] for c in calls] == ["f"]


def test_the_whole_answer_keeps_a_too_deep_block_as_text(module: TrainableModule) -> None:
    request = module.prepare([{"role": "user", "content": "call f"}], tools=TOOLS)
    answer = module._completion("<tool_call>" + DEEP, "length", request, 3)
    assert answer.text == "<tool_call>" + DEEP and not answer.tool_calls and answer.finish_reason == "length"


def _threaded(m: TrainableModule, request: Any, pieces: list[str]) -> list[StreamDelta]:
    ended = threading.Thread(target=lambda: None)
    ended.start()
    outcome = {"ids": [1, 2], "finish": "length"}
    return list(m._stream_deltas(request, iter(pieces), ended, threading.Event(), outcome, None))


def _on_the_loop(m: TrainableModule, request: Any, pieces: list[str]) -> list[StreamDelta]:
    def submit(job: Any) -> None:  # the engine's side, scripted: the pieces, then the end
        for piece in pieces:
            job.streamer.on_text(piece)
        job.outcome = ([1, 2], "length")
        job.on_end(job)

    async def collect() -> list[StreamDelta]:
        return [d async for batch in stream_batches(m, submit, request, threading.Event(), None) for d in batch]

    return asyncio.run(collect())


@pytest.mark.parametrize("path", [_threaded, _on_the_loop], ids=["threaded", "event-loop"])
def test_a_stream_keeps_a_too_deep_block_as_text(module: TrainableModule, path: Any) -> None:
    request = module.prepare([{"role": "user", "content": "call f"}], tools=TOOLS)
    pieces = ["Sure.", "<tool_call>", DEEP]
    deltas = path(module, request, pieces)
    assert "".join(d.text for d in deltas) == "".join(pieces)
    assert deltas[-1].finish_reason == "length" and not any(d.tool_calls for d in deltas)


def test_the_server_answers_a_too_deep_block_as_text_not_a_500(
    module: TrainableModule, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(module, "_decode", lambda ids: "<tool_call>" + DEEP)
    body = {"model": "tiny", "messages": [{"role": "user", "content": "call f"}], "tools": TOOLS}
    answer = httpx.post(module.url + "/chat/completions", json=body, timeout=60)
    assert answer.status_code == 200, answer.text[:300]
    message = answer.json()["choices"][0]["message"]
    assert message["content"] == "<tool_call>" + DEEP and not message.get("tool_calls")


def test_caller_arguments_nested_too_deep_are_a_typed_error_naming_the_field(module: TrainableModule) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "[" * 2000}}
    messages = [
        {"role": "user", "content": "call f"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    with pytest.raises(MessageError, match=r"messages\[1\]\.tool_calls\[0\]"):
        module.prepare(messages, tools=TOOLS)
