"""A whole JSON answer led by a UTF-8 byte order mark is read, on every source.

RFC 8259 (8.1) lets a parser ignore a leading BOM, and the official clients do
(``json.loads`` of the body's bytes drops it); the module decoded the body to text
first, and then ``json.loads`` refused the BOM: an ``APIResponseValidationError``
for a good answer.
"""

from __future__ import annotations

import json
import socket

import pytest

from modules import OnlineChatModule
from modules.testing import LoopbackServer, RecordedRequest, write_response

BODIES = {
    "openai-compatible": {"model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                                                     "finish_reason": "stop"}]},
    "anthropic": {"id": "x", "type": "message", "model": "c", "content": [{"type": "text", "text": "hi"}],
                  "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}},
    "gemini": {"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": "STOP"}]},
    "ollama": {"model": "m", "message": {"role": "assistant", "content": "hi"}, "done": True, "done_reason": "stop"},
}  # fmt: skip


@pytest.mark.parametrize("source", sorted(BODIES))
def test_a_json_answer_with_a_leading_bom_is_read(source):
    def handler(request: RecordedRequest, sock: socket.socket) -> bool:
        write_response(sock, 200, b"\xef\xbb\xbf" + json.dumps(BODIES[source]).encode())
        return True

    with LoopbackServer(handler) as server:
        root = f"http://127.0.0.1:{server.port}" + ("/v1" if source == "openai-compatible" else "")
        with OnlineChatModule(source=source, base_url=root, model="m", api_key="k-0123456789") as m:
            assert m("hi") == "hi"
            assert m.respond("hi").finish_reason == "stop"
