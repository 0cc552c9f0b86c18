"""Whole responses from every kind of source: ``respond()`` for a plain call, ``stream().response`` at a stream's end."""

from __future__ import annotations

import json

import pytest
from fault_server import FaultServer, Reply, Stream, completion, sse_events
from wire.anthropic import KEY as ANTHROPIC_KEY
from wire.anthropic import AnthropicServer
from wire.gemini import KEY as GEMINI_KEY
from wire.gemini import GeminiServer
from wire.ollama import MODEL as OLLAMA_MODEL
from wire.ollama import OllamaServer

from modules import OnlineChatModule
from modules.online.response import OnlineChatStream, Response

WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
}

NATIVE = {
    "anthropic": (AnthropicServer, {"api_key": ANTHROPIC_KEY, "model": "claude-test"}, "Hello from Claude.", 12, 5),
    "gemini": (GeminiServer, {"api_key": GEMINI_KEY, "model": "gemini-test"}, "Hello from Gemini.", 9, 4),
    "ollama": (OllamaServer, {"model": OLLAMA_MODEL}, "Hello from Ollama.", 11, 6),
}


@pytest.mark.parametrize("source", sorted(NATIVE))
def test_respond_gives_the_whole_answer(source):
    server_class, kw, text, prompt_tokens, completion_tokens = NATIVE[source]
    with server_class() as server:
        m = OnlineChatModule(source, base_url=server.base_url, **kw)
        response = m.respond("hi")
        assert isinstance(response, Response)
        assert response.text == text and response.finish_reason == "stop" and response.tool_calls == ()
        assert response.usage["prompt_tokens"] == prompt_tokens
        assert response.usage["completion_tokens"] == completion_tokens
        assert response.usage["total_tokens"] == prompt_tokens + completion_tokens
        assert response.model == kw["model"]
        assert isinstance(response.raw, dict)
        assert response.message == {"role": "assistant", "content": text}
        if source == "anthropic":
            assert response.request_id == "req_01"


@pytest.mark.parametrize("source", sorted(NATIVE))
def test_a_stream_read_to_its_end_gives_the_whole_answer(source):
    server_class, kw, text, prompt_tokens, completion_tokens = NATIVE[source]
    with server_class() as server:
        m = OnlineChatModule(source, base_url=server.base_url, **kw)
        s = m.stream("hi")
        assert isinstance(s, OnlineChatStream) and s.response is None
        assert "".join(s) == text
        response = s.response
        assert response is not None
        assert response.text == text and response.finish_reason == "stop"
        assert response.usage["prompt_tokens"] == prompt_tokens
        assert response.usage["completion_tokens"] == completion_tokens
        # Anthropic's message_start counts one output token; the total is the final counts' sum
        assert response.usage["total_tokens"] == prompt_tokens + completion_tokens
        assert response.model == kw["model"]


@pytest.mark.parametrize("source", sorted(NATIVE))
def test_tool_calls_come_back_in_the_same_openai_shape_from_every_provider(source):
    server_class, kw, *_ = NATIVE[source]
    with server_class() as server:
        m = OnlineChatModule(source, base_url=server.base_url, **kw)
        response = m.respond("Weather?", tools=[WEATHER])
        (call,) = response.tool_calls
        assert set(call) == {"id", "type", "function"} and call["type"] == "function" and call["id"]
        assert call["function"]["name"] == "get_weather"
        assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
        assert response.finish_reason == "tool_calls"
        assert response.message["tool_calls"] == [call] and response.message["content"] is None


def test_openai_stream_asks_for_usage_and_reports_it_at_the_end(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    tail = b"data: " + json.dumps({"id": "c", "model": "test-model", "choices": [], "usage": usage}).encode() + b"\n\n"
    events = sse_events("Hi there")
    with FaultServer() as server:
        server.script.append(Stream([*events[:-1], tail, events[-1]], headers={"x-request-id": "req_9"}))
        m = OnlineChatModule("openai", base_url=server.base_url)
        s = m.stream("hi")
        assert "".join(s) == "Hi there"
        assert server.requests[0].json()["stream_options"] == {"include_usage": True}
        assert s.response.usage == usage and s.response.model == "test-model"
        assert s.response.request_id == "req_9"


def test_a_generic_compatible_server_is_not_sent_stream_options_unless_asked():
    with FaultServer() as server:
        m = OnlineChatModule(base_url=server.base_url, model="local")
        assert "".join(m.stream("hi"))
        assert "stream_options" not in server.requests[0].json()
        assert "".join(m.stream("hi", stream_options={"include_usage": True}))
        assert server.requests[1].json()["stream_options"] == {"include_usage": True}


def test_respond_on_an_openai_compatible_source(monkeypatch):
    with FaultServer() as server:
        server.script.append(Reply(body=completion("Paris."), headers={"x-request-id": "req_7"}))
        response = OnlineChatModule(base_url=server.base_url, model="m").respond("Capital of France?")
    assert (response.text, response.finish_reason, response.model, response.request_id) == (
        "Paris.",
        "stop",
        "test-model",
        "req_7",
    )
    assert response.usage == {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}


def test_the_request_id_is_masked_when_a_server_echoes_the_key():
    key = "sk-test-0123456789abcdef"
    with FaultServer() as server:
        server.script.append(Reply(body=completion("ok"), headers={"x-request-id": f"id-{key}"}))
        response = OnlineChatModule(base_url=server.base_url, model="m", api_key=key).respond("hi")
    assert key not in response.request_id
