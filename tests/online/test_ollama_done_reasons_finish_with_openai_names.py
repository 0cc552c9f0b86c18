"""Ollama's ``done_reason`` values that OpenAI has no name for (``load``, ``unload``) finish as ``stop``
(the raw answer keeps Ollama's), on /api/chat and /api/generate, whole and streamed, as the docs promise
``finish_reason`` in OpenAI's names from every source; ``length`` stays ``length``."""

from __future__ import annotations

import json

import pytest
from wire.common import Answer, Received, json_answer
from wire.ollama import MODEL, OllamaServer

from modules import OnlineChatModule


class DoneReasonServer(OllamaServer):
    """The wire server, answering a valid request with the given ``done_reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason

    def handle(self, request: Received) -> Answer:
        super().handle(request)  # validated as Ollama validates it
        key = "response" if request.path == "/api/generate" else "message"
        piece = "Hi" if key == "response" else {"role": "assistant", "content": "Hi"}
        done = {"model": MODEL, key: piece, "done": True, "done_reason": self.reason, "eval_count": 1}
        if request.body.get("stream") is False:
            return json_answer(done)
        return Answer(200, {"Content-Type": "application/x-ndjson"}, chunks=[json.dumps(done).encode() + b"\n"])


CASES = [("load", "stop"), ("unload", "stop"), ("length", "length"), ("stop", "stop")]


@pytest.mark.parametrize("fmt", ["ollama", "ollama_generate"])
@pytest.mark.parametrize(("reason", "expected"), CASES)
def test_whole_and_streamed_answers_finish_with_openai_names(fmt, reason, expected):
    with DoneReasonServer(reason) as server:
        m = OnlineChatModule("ollama", model=MODEL, base_url=server.base_url, format=fmt)
        response = m.respond("hi")
        assert response.finish_reason == expected and response.raw["done_reason"] == reason
        stream = m.stream("hi")
        assert "".join(stream) == "Hi"
        assert stream.response.finish_reason == expected
        assert server.rejections == []
