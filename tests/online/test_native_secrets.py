"""The key never comes back from a native provider's answer: error bodies, text, tool calls, streamed pieces."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wire.anthropic import AnthropicServer
from wire.anthropic import sse as anthropic_event
from wire.common import Answer, WireServer, json_answer
from wire.gemini import GeminiServer
from wire.ollama import MODEL as OLLAMA_MODEL
from wire.ollama import OllamaServer

from modules import OnlineChatModule
from modules.errors import APIStatusError

KEY = "sk-canary-0123456789abcdefXYZ"


def anthropic_plain(text: str, args: dict) -> dict:
    return {"id": "m", "type": "message", "role": "assistant", "model": "c", "stop_reason": "tool_use",
            "content": [{"type": "text", "text": text}, {"type": "tool_use", "id": "t", "name": "f", "input": args}],
            "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip


def anthropic_stream(pieces: list[str]) -> bytes:
    events = [("message_start", {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {}}}),
              ("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "text", "text": ""}})]  # fmt: skip
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": p}}) for p in pieces]  # fmt: skip
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
               ("message_stop", {"type": "message_stop"})]  # fmt: skip
    return b"".join(anthropic_event(n, v) for n, v in events)


def gemini_plain(text: str, args: dict) -> dict:
    parts = [{"text": text}, {"functionCall": {"name": "f", "args": args}}]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}


def gemini_stream(pieces: list[str]) -> bytes:
    chunks = [{"candidates": [{"content": {"role": "model", "parts": [{"text": p}]}}]} for p in pieces]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks)


def ollama_plain(text: str, args: dict) -> dict:
    message = {"role": "assistant", "content": text, "tool_calls": [{"function": {"name": "f", "arguments": args}}]}
    return {"model": OLLAMA_MODEL, "message": message, "done": True, "done_reason": "stop"}


def ollama_stream(pieces: list[str]) -> bytes:
    lines = [{"model": OLLAMA_MODEL, "message": {"role": "assistant", "content": p}, "done": False} for p in pieces]
    lines.append({"model": OLLAMA_MODEL, "message": {"role": "assistant", "content": ""}, "done": True})
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def generate_plain(text: str, args: dict) -> dict:
    """/api/generate has no tool calls: the arguments are echoed in the text instead."""
    return {"model": OLLAMA_MODEL, "response": text + json.dumps(args), "done": True, "done_reason": "stop"}


def generate_stream(pieces: list[str]) -> bytes:
    lines = [{"model": OLLAMA_MODEL, "response": p, "done": False} for p in pieces]
    lines.append({"model": OLLAMA_MODEL, "response": "", "done": True})
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


DIALECTS = {
    "anthropic": (AnthropicServer, anthropic_plain, anthropic_stream, "text/event-stream", "claude-test",
                  {"type": "error", "error": {"type": "invalid_request_error", "message": f"bad key {KEY}"}}),
    "gemini": (GeminiServer, gemini_plain, gemini_stream, "text/event-stream", "gemini-test",
               {"error": {"code": 400, "message": f"bad key {KEY}", "status": "INVALID_ARGUMENT"}}),
    "ollama": (OllamaServer, ollama_plain, ollama_stream, "application/x-ndjson", OLLAMA_MODEL,
               {"error": f"bad key {KEY}"}),
    "ollama_generate": (OllamaServer, generate_plain, generate_stream, "application/x-ndjson", OLLAMA_MODEL,
                        {"error": f"bad key {KEY}"}),
}  # fmt: skip


def module(source: str, server: WireServer) -> OnlineChatModule:
    if source == "ollama_generate":
        return OnlineChatModule("ollama", model=OLLAMA_MODEL, api_key=KEY, base_url=server.base_url, max_retries=0,
                                format="ollama_generate")  # fmt: skip
    return OnlineChatModule(source, model=DIALECTS[source][4], api_key=KEY, base_url=server.base_url, max_retries=0)


@pytest.mark.parametrize("source", sorted(DIALECTS))
def test_a_key_echoed_in_an_error_body_never_reaches_the_caller(source):
    server_class, *_, error = DIALECTS[source]
    with server_class() as server:
        server.script.append(json_answer(error, 400, {"request-id": f"req-{KEY}"}))
        with pytest.raises(APIStatusError) as info:
            module(source, server)("hi")
    exc = info.value
    for shown in (str(exc), repr(exc), json.dumps(exc.body), str(exc.request_id)):
        assert KEY not in shown


@pytest.mark.parametrize("source", sorted(DIALECTS))
def test_a_key_echoed_in_answer_text_and_tool_arguments_is_masked(source):
    server_class, plain, *_ = DIALECTS[source]
    with server_class() as server:
        server.script.append(json_answer(plain(f"your key is {KEY}", {"secret": KEY, KEY: 1})))
        response = module(source, server).respond("hi")
    assert KEY not in repr(response)
    assert "***" in response.text


@pytest.mark.parametrize("source", sorted(DIALECTS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.sampled_from([f"a {KEY} b", KEY, f"{KEY}{KEY}"]), cuts=st.lists(st.integers(0, 70), max_size=4))
def test_a_key_split_across_stream_events_anywhere_is_masked(source, text, cuts):
    server_class, _, stream, content_type, *_ = DIALECTS[source]
    points = sorted({min(c, len(text)) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)]) if text[a:b]]
    with server_class() as server:
        server.script.append(Answer(200, {"Content-Type": content_type}, chunks=[stream(pieces)]))
        s = module(source, server).stream("hi")
        joined = "".join(s)
    assert KEY not in joined and KEY not in s.response.text
    assert joined.count("***") == text.count(KEY)
