"""source="anthropic" against a loopback Messages API that rejects what the real one rejects."""

from __future__ import annotations

import json

import pytest
from fault_server import FakeClock
from wire.anthropic import KEY, AnthropicServer, sse
from wire.common import Answer, json_answer, split_every

from modules import OnlineChatModule
from modules.errors import (
    AuthenticationError,
    BadRequestError,
    InternalServerError,
    ModuleConfigError,
    StreamError,
    StreamInterruptedError,
)
from modules.online.anthropic import DEFAULT_MAX_TOKENS
from modules.online.retry import RetryPolicy

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
PNG = "data:image/png;base64,iVBORw0KGgo="


@pytest.fixture
def server():
    with AnthropicServer() as srv:
        yield srv


def make(server: AnthropicServer, clock: FakeClock | None = None, **kw) -> OnlineChatModule:
    clock = clock or FakeClock()
    kw.setdefault("retry", RetryPolicy(sleep=clock.sleep, clock=clock.clock, random=lambda: 0.0))
    kw.setdefault("api_key", KEY)
    return OnlineChatModule("anthropic", model="claude-test", base_url=server.base_url, **kw)


def test_plain_call_sends_system_at_top_level_and_the_image_as_a_native_block(server):
    m = make(server).prompt("You are terse.")
    question = [{"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                              {"type": "image_url", "image_url": {"url": PNG}}]}]  # fmt: skip
    assert m(question) == "Hello from Claude."
    (sent,) = server.received
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY and sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    assert isinstance(sent.body["system"], str) and "You are terse." in sent.body["system"]
    assert all(msg["role"] != "system" for msg in sent.body["messages"])
    assert sent.body["max_tokens"] == DEFAULT_MAX_TOKENS
    image = sent.body["messages"][0]["content"][1]
    assert image == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}


def test_generation_options_are_translated_and_openai_only_ones_refused(server):
    m = make(server)
    body = m.build_request("hi", max_tokens=50, stop="END", temperature=0.5).body
    assert body["max_tokens"] == 50 and body["stop_sequences"] == ["END"] and "stop" not in body
    assert m("hi", max_tokens=50, stop=["END"], temperature=0.5, top_k=3) == "Hello from Claude."
    with pytest.raises(ModuleConfigError, match="seed"):
        m.build_request("hi", seed=1)
    with pytest.raises(ModuleConfigError, match="'n'"):
        m.build_request("hi", n=2)
    assert "n" not in m.build_request("hi", n=1).body


def test_stream_yields_text_deltas_and_ends_with_the_finish_reason(server):
    m = make(server)
    with m.stream("hi") as s:
        pieces = list(s)
    assert "".join(pieces) == "Hello from Claude." and len(pieces) > 1
    assert s.finish_reason == "stop"
    assert server.received[0].body["stream"] is True


def test_tool_call_round_trip_in_openai_shape(server):
    m = make(server)
    reply = m("Weather in Paris?", tools=[WEATHER])
    assert isinstance(reply, dict)
    (call,) = reply["tool_calls"]
    assert call == {"id": "toolu_01A", "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip
    tools_sent = server.received[0].body["tools"]
    assert tools_sent[0]["input_schema"]["properties"] == {"city": {"type": "string"}}
    history = [{"role": "user", "content": "Weather in Paris?"}, reply]
    result = {"role": "tool", "tool_call_id": call["id"], "content": "18 C"}
    assert m(result, history=history, tools=[WEATHER]) == "Hello from Claude."
    assert not server.rejections
    blocks = server.received[1].body["messages"][2]["content"]
    assert blocks == [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "18 C"}]


def test_streamed_tool_call_arguments_are_assembled_from_split_json_deltas(server):
    server.tool_input = {"city": "Paris", "days": [1, 2, 3], "note": "ünïcode"}
    m = make(server)
    with m.stream("Weather?", tools=[WEATHER]) as s:
        assert list(s) == []
    assert s.finish_reason == "tool_calls"
    (call,) = s.tool_calls
    assert json.loads(call["function"]["arguments"]) == server.tool_input
    assert call["id"] == "toolu_01A"


def test_429_with_retry_after_is_retried_once(server):
    clock = FakeClock()
    server.script.append(json_answer({"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}},
                                     429, {"retry-after": "3"}))  # fmt: skip
    assert make(server, clock)("hi") == "Hello from Claude."
    assert clock.sleeps == [3.0] and len(server.received) == 2


def test_529_overloaded_is_retried_like_a_5xx_and_raised_when_it_persists(server):
    clock = FakeClock()
    overloaded = json_answer({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, 529)
    server.script.append(overloaded)
    assert make(server, clock)("hi") == "Hello from Claude."
    assert len(server.received) == 2
    server.script[:] = [overloaded] * 3
    with pytest.raises(InternalServerError, match="Overloaded") as info:
        make(server, clock)("hi")
    assert info.value.status_code == 529 and len(server.received) == 2 + 3


def test_400_is_a_bad_request_error_with_the_servers_message(server):
    # (a temperature above 1 is refused before sending now: test_native_tool_choice.py)
    with pytest.raises(BadRequestError, match="stop_sequences") as info:
        make(server)("hi", stop_sequences="END")  # Anthropic's own field, sent as given: a list is required
    assert info.value.request_id == "req_err"
    assert len(server.received) == 1


def test_401_on_a_wrong_key_is_an_authentication_error_without_the_key(server):
    with pytest.raises(AuthenticationError) as info:
        make(server, api_key="sk-ant-wrong-key-000000000")("hi")
    assert "sk-ant-wrong" not in str(info.value)


def test_the_key_comes_from_anthropic_api_key(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    m = OnlineChatModule("anthropic", model="claude-test", base_url=server.base_url)
    assert m("hi") == "Hello from Claude."
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ModuleConfigError, match="ANTHROPIC_API_KEY"):
        OnlineChatModule("anthropic", base_url=server.base_url)


def test_anthropic_base_url_is_honoured(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    assert OnlineChatModule("anthropic", api_key=KEY).build_request("hi").url == server.base_url + "/v1/messages"
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    assert OnlineChatModule("anthropic", api_key=KEY).build_request("hi").url == "https://api.anthropic.com/v1/messages"


def _stream_of(*events: tuple[str, dict]) -> bytes:
    return b"".join(sse(name, value) for name, value in events)


START = ("message_start", {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {"input_tokens": 1}}})
BLOCK = ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
DELTA = ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}})


def test_a_cut_stream_raises_with_the_partial_text_and_is_not_retried(server):
    data = _stream_of(START, BLOCK, DELTA)
    server.script.append(Answer(200, {"Content-Type": "text/event-stream"}, chunks=split_every(data, 11), cut=True))
    s = make(server).stream("hi")
    with pytest.raises(StreamInterruptedError) as info:
        list(s)
    assert info.value.partial_text == "Hel" and len(server.received) == 1


def test_an_error_event_mid_stream_is_a_stream_error(server):
    overloaded = ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    data = _stream_of(START, BLOCK, DELTA, overloaded)
    server.script.append(Answer(200, {"Content-Type": "text/event-stream"}, chunks=[data]))
    with pytest.raises(StreamError, match="Overloaded") as info:
        list(make(server).stream("hi"))
    assert info.value.partial_text == "Hel" and len(server.received) == 1


def test_the_wire_server_rejects_what_anthropic_rejects(server):
    """The loopback server is strict, so the tests above can fail."""
    import requests

    def post(body, headers=None):
        h = {"x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json", **(headers or {})}
        return requests.post(server.base_url + "/v1/messages", data=json.dumps(body), headers=h, timeout=5).status_code

    ok = {"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    assert post(ok) == 200
    assert post({k: v for k, v in ok.items() if k != "max_tokens"}) == 400
    assert post(ok, {"anthropic-version": ""}) == 400
    assert post(ok, {"x-api-key": "nope"}) == 401
    # consecutive turns of one role are combined ("into a single turn", the Messages reference), then checked
    assert post({**ok, "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}) == 200
    assert post({**ok, "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": ""}]}) == 400
    assert post({**ok, "messages": [{"role": "system", "content": "a"}]}) == 400
    assert post({**ok, "messages": [{"role": "user", "content": [{"type": "video", "url": "x"}]}]}) == 400
    assert post({**ok, "stop": ["x"]}) == 400
