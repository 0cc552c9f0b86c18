"""Usage counts of the wrong type are kept as sent, never a bare ``TypeError``.

Anthropic's and Gemini's usage objects are given OpenAI's keys beside their own; a server
(a proxy adding OpenAI's names, say) that already sent ``prompt_tokens: null`` with a
numeric ``completion_tokens`` made the module add ``None + 3`` and raise ``TypeError``
out of ``m(...)``, ``m.respond(...)`` and streams. A total is now computed only from two
whole numbers; the counts themselves are kept as the server sent them.
"""

from __future__ import annotations

import json
import socket

import pytest

from modules import OnlineChatModule
from modules.testing import LoopbackServer, RecordedRequest, write_response

ODD = [
    {"prompt_tokens": None, "completion_tokens": 3},
    {"prompt_tokens": "7", "completion_tokens": 3},
    {"prompt_tokens": 2, "completion_tokens": [1]},
    {"prompt_tokens": {"n": 1}, "completion_tokens": None},
]


def _answer(path: str, usage: dict, stream: bool) -> bytes:
    if "/v1/messages" in path:
        message = {"id": "m", "type": "message", "model": "c", "content": [{"type": "text", "text": "hi"}],
                   "stop_reason": "end_turn", "usage": usage}  # fmt: skip
        if not stream:
            return json.dumps(message).encode()
        events = [("message_start", {"type": "message_start", "message": {**message, "content": []}}),
                  ("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": "hi"}}),
                  ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage}),
                  ("message_stop", {"type": "message_stop"})]  # fmt: skip
        return b"".join(f"event: {n}\ndata: {json.dumps(v)}\n\n".encode() for n, v in events)
    body = {"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": "STOP"}],
            "usageMetadata": usage}  # fmt: skip
    return f"data: {json.dumps(body)}\n\n".encode() if stream else json.dumps(body).encode()


@pytest.mark.parametrize("usage", ODD, ids=range(len(ODD)))
@pytest.mark.parametrize("source", ["anthropic", "gemini"])
def test_usage_with_openai_keys_of_odd_types_does_not_break_the_answer(source, usage):
    def handler(request: RecordedRequest, sock: socket.socket) -> bool:
        stream = "alt=sse" in request.path or bool(request.json().get("stream"))
        body = _answer(request.path, usage, stream)
        write_response(sock, 200, body, {"Content-Type": "text/event-stream" if stream else "application/json"})
        return True

    with LoopbackServer(handler) as server:
        with OnlineChatModule(source=source, base_url=f"http://127.0.0.1:{server.port}", api_key="k-0123456789",
                              model="m") as m:  # fmt: skip
            assert m("hi") == "hi"
            response = m.respond("hi")
            stream = m.stream("hi")
            assert "".join(stream) == "hi"
    for got in (response.usage, stream.response.usage):
        assert got is not None
        assert got["prompt_tokens"] == usage["prompt_tokens"] or isinstance(got["prompt_tokens"], int)
        assert "total_tokens" not in got or isinstance(got["total_tokens"], int)
