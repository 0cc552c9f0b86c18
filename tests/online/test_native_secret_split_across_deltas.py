"""A key split across two of Anthropic's stream deltas is masked in what is assembled from them.

Each event is masked on its own, and streamed text is masked across events, but a tool
call's ``input_json_delta`` pieces and a thinking block's ``thinking_delta`` pieces are
joined by the module after the events were masked: a key sent half in one delta and half
in the next came back whole in ``response.tool_calls``, ``response.message`` and
``response.thinking_blocks``. Masked now once assembled, at every split point.
"""

from __future__ import annotations

import json
import socket

import pytest

from modules import OnlineChatModule
from modules.testing import LoopbackServer, RecordedRequest

KEY = "sk-ant-canary-0123456789abcdef"
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]


def _event(name: str, value: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(value)}\n\n".encode()


def _stream(split: int) -> bytes:
    start = {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {"input_tokens": 1}}}
    thinking = {"type": "thinking", "thinking": "", "signature": ""}
    tool = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}

    def delta(index: int, **d: str) -> dict:
        return {"type": "content_block_delta", "index": index, "delta": d}

    events = [
        ("message_start", start),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": thinking}),
        ("content_block_delta", delta(0, type="thinking_delta", thinking="I see " + KEY[:split])),
        ("content_block_delta", delta(0, type="thinking_delta", thinking=KEY[split:] + " there")),
        ("content_block_delta", delta(0, type="signature_delta", signature="sig")),
        ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": tool}),
        ("content_block_delta", delta(1, type="input_json_delta", partial_json='{"a": "' + KEY[:split])),
        ("content_block_delta", delta(1, type="input_json_delta", partial_json=KEY[split:] + '"}')),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return b"".join(_event(name, value) for name, value in events)


@pytest.mark.parametrize("split", [1, 7, len(KEY) // 2, len(KEY) - 1])
def test_a_key_split_across_tool_input_and_thinking_deltas_is_masked(split):
    body = _stream(split)

    def handler(request: RecordedRequest, sock: socket.socket) -> bool:
        head = f"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
        sock.sendall(head.encode() + body)
        return True

    with LoopbackServer(handler) as server:
        m = OnlineChatModule(source="anthropic", base_url=f"http://127.0.0.1:{server.port}", api_key=KEY)
        stream = m.stream("hi", tools=TOOLS)
        assert list(stream) == []
        response = stream.response
        m.close()
    assert response is not None
    seen = repr((response, response.message, stream.tool_calls, stream.message))
    assert KEY not in seen
    assert json.loads(response.tool_calls[0]["function"]["arguments"]) == {"a": "***"}
    assert response.thinking_blocks == ({"type": "thinking", "thinking": "I see *** there", "signature": "sig"},)
