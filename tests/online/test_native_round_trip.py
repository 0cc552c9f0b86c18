"""Property: whatever arguments a provider's tool call carries, they come back in OpenAI's shape unchanged,
and feeding the call and its result back through the prompter's history gives a request the provider accepts."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wire.anthropic import KEY as ANTHROPIC_KEY
from wire.anthropic import AnthropicServer
from wire.gemini import KEY as GEMINI_KEY
from wire.gemini import GeminiServer
from wire.ollama import MODEL as OLLAMA_MODEL
from wire.ollama import OllamaServer

from modules import OnlineChatModule

TOOL = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {"q": {}}}}}
SERVERS = {
    "anthropic": (AnthropicServer, {"api_key": ANTHROPIC_KEY, "model": "c"}),
    "gemini": (GeminiServer, {"api_key": GEMINI_KEY, "model": "g"}),
    "ollama": (OllamaServer, {"model": OLLAMA_MODEL}),
}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=3),
    max_leaves=10,
)
arguments = st.dictionaries(st.text(min_size=1, max_size=6), json_values, max_size=4)


@pytest.mark.parametrize("source", sorted(SERVERS))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=arguments, streamed=st.booleans(), result=st.text(min_size=1, max_size=20).filter(str.strip))
def test_any_tool_arguments_round_trip(source, args, streamed, result):
    server_class, kw = SERVERS[source]
    with server_class() as server:
        server.tool_input = args
        m = OnlineChatModule(source, base_url=server.base_url, **kw)
        if streamed:
            with m.stream("go", tools=[TOOL]) as s:
                list(s)
            reply = s.message
        else:
            reply = m("go", tools=[TOOL])
        assert isinstance(reply, dict)
        (call,) = reply["tool_calls"]
        assert set(call) == {"id", "type", "function"} and call["type"] == "function" and call["id"]
        assert call["function"]["name"] == "lookup"
        assert json.loads(call["function"]["arguments"]) == args
        history = [{"role": "user", "content": "go"}, reply]
        answer = m({"role": "tool", "tool_call_id": call["id"], "content": result}, history=history, tools=[TOOL])
        assert not server.rejections, server.rejections[0].body
        assert isinstance(answer, str)


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("source", sorted(SERVERS))
def test_parallel_tool_calls_and_their_results_round_trip(source, streamed):
    server_class, kw = SERVERS[source]
    with server_class() as server:
        server.parallel = 3
        m = OnlineChatModule(source, base_url=server.base_url, **kw)
        if streamed:
            with m.stream("go", tools=[TOOL]) as s:
                list(s)
            reply = s.message
        else:
            reply = m("go", tools=[TOOL])
        calls = reply["tool_calls"]
        assert len(calls) == 3 and len({c["id"] for c in calls}) == 3
        results = [{"role": "tool", "tool_call_id": c["id"], "content": f"result {i}"} for i, c in enumerate(calls)]
        history = [{"role": "user", "content": "go"}, reply]
        assert isinstance(m(results, history=history, tools=[TOOL]), str)
        assert not server.rejections, server.rejections[0].body
