"""A stream whose finish reason has arrived is whole: the total deadline passing while what follows it
(OpenAI's usage chunk and ``[DONE]``, Anthropic's ``message_stop``) is still on its way ends the stream
with the whole answer, as a connection lost there does, never a ``StreamTimeoutError`` that throws the
answer away."""

from __future__ import annotations

import json
from typing import Any

from fault_server import FakeClock, FaultServer, Stream

from modules import OnlineChatModule
from modules.online.config import Timeout
from modules.online.retry import RetryPolicy


def openai_event(choices: list[dict[str, Any]], **more: Any) -> bytes:
    return b"data: " + json.dumps({"id": "c", "model": "m", "choices": choices, **more}).encode() + b"\n\n"


def anthropic_event(kind: str, **data: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


OPENAI = [
    openai_event([{"index": 0, "delta": {"content": "Hello "}, "finish_reason": None}]),
    openai_event([{"index": 0, "delta": {"content": "world"}, "finish_reason": "stop"}]),
    openai_event([], usage={"prompt_tokens": 2, "completion_tokens": 2, "total_tokens": 4}),
    b"data: [DONE]\n\n",
]
ANTHROPIC = [
    anthropic_event("message_start", message={"id": "msg_1", "model": "m", "usage": {"input_tokens": 2}}),
    anthropic_event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
    anthropic_event("content_block_delta", index=0, delta={"type": "text_delta", "text": "Hello "}),
    anthropic_event("content_block_delta", index=0, delta={"type": "text_delta", "text": "world"}),
    anthropic_event("content_block_stop", index=0),
    anthropic_event("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 2}),
    anthropic_event("message_stop"),
]


def test_the_deadline_passing_after_the_finish_keeps_the_whole_answer():
    for source, events in (("openai-compatible", OPENAI), ("anthropic", ANTHROPIC)):
        clock = FakeClock()
        policy = RetryPolicy(sleep=clock.sleep, clock=clock.clock, random=lambda: 0.0)
        with FaultServer() as server:
            server.script[:] = [Stream(events)]  # one event per write: each read sees what came so far
            base = server.base_url if source == "openai-compatible" else server.base_url.removesuffix("/v1")
            m = OnlineChatModule(source, model="m", base_url=base, api_key="sk-test-key", retry=policy,
                                 timeout=Timeout(total=10))  # fmt: skip
            pieces = []
            with m.stream("hi") as s:
                for piece in s:
                    pieces.append(piece)
                    if s.finish_reason is not None:
                        clock.now += 100  # the deadline passes before the rest of the stream is read
            m.close()
        assert "".join(pieces) == "Hello world" and s.finish_reason == "stop", source
