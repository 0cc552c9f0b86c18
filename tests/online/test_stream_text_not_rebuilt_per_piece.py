"""Threat: a server streams a long answer in many small pieces (quadratic time from linear input).

``state.text += piece`` on an attribute copies the whole text received so far for every
piece (the interpreter's in-place append does not apply to attributes): 120,000 events
of 100 characters took 145 s through ``m.stream(...)``. The stream states must keep the
pieces and join them once, when read.

No clock here: each piece is a ``str`` subclass that counts the characters a ``+``
involving it copies. Folding N pieces may copy about the text once; rebuilding it per
piece copies it about N/2 times. (``benchmarks/bench_stream_linear.py`` times every
source's state, those whose pieces reach the text as plain strings included.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import modules.online.anthropic as anthropic_module
import modules.online.sse as sse_module
from modules.base import ChatStream, StreamDelta
from modules.online.anthropic import ANTHROPIC
from modules.online.sse import ChatStreamState, ServerSentEvent

N = 2_000
PIECE = "x" * 100
COPIED = [0]


class Counted(str):
    """A piece of text that counts what concatenating it copies."""

    def __add__(self, other: str) -> str:
        COPIED[0] += len(self) + len(other)
        return str(self) + str(other)

    def __radd__(self, other: str) -> str:
        COPIED[0] += len(self) + len(other)
        return str(other) + str(self)


def _counted(value: Any) -> Any:
    if type(value) is str:
        return Counted(value)
    if isinstance(value, dict):
        return {k: _counted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_counted(v) for v in value]
    return value


def _openai(i: int) -> ServerSentEvent:
    return ServerSentEvent(json.dumps({"choices": [{"index": 0, "delta": {"content": PIECE}}]}))


def _openai_arguments(i: int) -> ServerSentEvent:
    call = {"index": 0, "function": {"arguments": PIECE}}
    if i == 0:
        call = {"index": 0, "id": "c", "function": {"name": "f", "arguments": PIECE}}
    return ServerSentEvent(json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}))


def _anthropic(kind: str, field: str) -> Callable[[int], ServerSentEvent]:
    def event(i: int) -> ServerSentEvent:
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": kind, field: PIECE}}
        return ServerSentEvent(json.dumps(delta), event="content_block_delta")

    return event


def _anthropic_state(block: dict[str, Any]) -> Callable[[], Any]:
    def make() -> Any:
        state = ANTHROPIC.stream_state(lambda v: v)
        state.on_event(ServerSentEvent(json.dumps({"type": "content_block_start", "index": 0, "content_block": block})))
        return state

    return make


def _anthropic_arguments(state: Any) -> str:
    state.on_event(ServerSentEvent(json.dumps({"type": "message_stop"}), event="message_stop"))
    return str(state.calls[0]["function"]["arguments"])


CASES = {
    "openai text": (ChatStreamState, _openai, lambda s: s.text),
    "openai tool-call arguments": (ChatStreamState, _openai_arguments, lambda s: s.tool_calls()[0]["function"]["arguments"]),
    "anthropic text": (_anthropic_state({"type": "text", "text": ""}), _anthropic("text_delta", "text"), lambda s: s.text),
    "anthropic thinking": (_anthropic_state({"type": "thinking", "thinking": "", "signature": ""}),
                           _anthropic("thinking_delta", "thinking"), lambda s: s.thinking_blocks[0]["thinking"]),
    "anthropic tool input": (_anthropic_state({"type": "tool_use", "id": "t", "name": "f", "input": {}}),
                             _anthropic("input_json_delta", "partial_json"), _anthropic_arguments),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_stream_state_copies_the_text_about_once(monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    for module in (sse_module, anthropic_module):
        monkeypatch.setattr(module, "loads", lambda text, loads=module.loads: _counted(loads(text)))
    make, event, result = CASES[case]
    state = make()
    COPIED[0] = 0
    for i in range(N):
        state.on_event(event(i))
    assert len(result(state)) == N * len(PIECE)
    assert COPIED[0] <= 2 * N * len(PIECE), f"{case}: {COPIED[0]} characters copied for {N * len(PIECE)} received"


def test_a_chat_stream_copies_the_text_about_once() -> None:
    COPIED[0] = 0
    stream = ChatStream(iter([StreamDelta(text=Counted(PIECE)) for _ in range(N)]))
    for _ in stream:
        pass
    assert len(stream.text) == N * len(PIECE)
    assert COPIED[0] <= 2 * N * len(PIECE), f"ChatStream: {COPIED[0]} characters copied for {N * len(PIECE)} received"
