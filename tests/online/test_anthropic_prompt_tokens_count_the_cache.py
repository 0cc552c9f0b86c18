"""Anthropic's ``prompt_tokens`` counts the whole prompt, cached tokens included, as OpenAI's does.

Anthropic's ``input_tokens`` counts only the tokens after the last cache breakpoint; the tokens
written to the cache (``cache_creation_input_tokens``) and read from it
(``cache_read_input_tokens``) are counted apart, and the prompt is their sum. OpenAI's
``prompt_tokens`` is the whole prompt (cached tokens included), so a prompt of 2,010 tokens with
2,000 read from the cache came back as ``prompt_tokens == 10``: usage, cost and context checks
built on OpenAI's keys were off by the cached part. Anthropic's own keys stay beside them.
"""

from __future__ import annotations

import json
from typing import Any

from wire.anthropic import KEY, AnthropicServer, sse
from wire.common import Answer, json_answer

from modules import OnlineChatModule

USAGE = {"input_tokens": 10, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 2000, "output_tokens": 5}


def _message(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn", "stop_sequence": None, "usage": usage,
    }  # fmt: skip


def _stream(start: dict[str, Any], end: dict[str, Any]) -> Answer:
    message = {**_message(start), "content": [], "stop_reason": None}
    events = [
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi."}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": end}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return Answer(200, {"Content-Type": "text/event-stream"}, chunks=[b"".join(sse(n, v) for n, v in events)])


def _module(server: AnthropicServer) -> OnlineChatModule:
    return OnlineChatModule("anthropic", model="claude-test", base_url=server.base_url, api_key=KEY)


def test_a_plain_answer_counts_cached_prompt_tokens():
    with AnthropicServer() as server, _module(server) as m:
        server.script.append(json_answer(_message(USAGE)))
        usage = m.respond("hi").usage
    assert usage is not None
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"]) == (2310, 5, 2315)
    assert usage["input_tokens"] == 10 and usage["cache_read_input_tokens"] == 2000  # Anthropic's own kept


def test_a_stream_counts_cached_prompt_tokens():
    start = {**USAGE, "output_tokens": 1}
    with AnthropicServer() as server, _module(server) as m:
        server.script.append(_stream(start, {"output_tokens": 5}))  # message_delta repeats no input counts
        server.script.append(_stream(start, {**USAGE, "cache_read_input_tokens": 1000}))  # ... or its own
        streams = [m.stream("hi"), m.stream("hi")]
        for stream in streams:
            assert "".join(stream) == "Hi."
    first, second = (s.response.usage for s in streams if s.response is not None)
    assert (first["prompt_tokens"], first["completion_tokens"], first["total_tokens"]) == (2310, 5, 2315)
    assert (second["prompt_tokens"], second["total_tokens"]) == (1310, 1315)


def test_usage_without_cache_counts_is_unchanged():
    with AnthropicServer() as server, _module(server) as m:
        usage = m.respond("hi").usage
        stream = m.stream("hi")
        "".join(stream)
    assert usage is not None and stream.response is not None and stream.response.usage is not None
    assert (usage["prompt_tokens"], usage["total_tokens"]) == (12, 17)
    assert json.dumps(stream.response.usage["prompt_tokens"]) == "12"
