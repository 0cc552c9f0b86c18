"""source="gemini" against a loopback generateContent API that rejects what the real one rejects."""

from __future__ import annotations

import json

import pytest
import requests
from fault_server import FakeClock
from wire.common import Answer, json_answer, split_every
from wire.gemini import KEY, GeminiServer

from modules import OnlineChatModule
from modules.errors import (
    AuthenticationError,
    BadRequestError,
    InternalServerError,
    ModuleConfigError,
    StreamError,
    StreamInterruptedError,
)
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
    with GeminiServer() as srv:
        yield srv


def make(server: GeminiServer, clock: FakeClock | None = None, **kw) -> OnlineChatModule:
    clock = clock or FakeClock()
    kw.setdefault("retry", RetryPolicy(sleep=clock.sleep, clock=clock.clock, random=lambda: 0.0))
    kw.setdefault("api_key", KEY)
    return OnlineChatModule("gemini", model="gemini-test", base_url=server.base_url, **kw)


def test_plain_call_sends_the_system_instruction_and_the_image_inline(server):
    m = make(server).prompt("You are terse.")
    question = [{"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                              {"type": "image_url", "image_url": {"url": PNG}}]}]  # fmt: skip
    assert m(question, max_tokens=20, stop="END", temperature=0.2) == "Hello from Gemini."
    (sent,) = server.received
    assert sent.path == "/v1beta/models/gemini-test:generateContent"
    assert sent.headers["x-goog-api-key"] == KEY and "key=" not in sent.path and "authorization" not in sent.headers
    assert "You are terse." in sent.body["system_instruction"]["parts"][0]["text"]
    assert sent.body["contents"][0]["parts"][1] == {"inline_data": {"mime_type": "image/png", "data": "iVBORw0KGgo="}}
    assert sent.body["generationConfig"] == {"maxOutputTokens": 20, "temperature": 0.2, "stopSequences": ["END"]}


def test_stream_goes_to_stream_generate_content_with_alt_sse(server):
    m = make(server)
    with m.stream("hi") as s:
        pieces = list(s)
    assert "".join(pieces) == "Hello from Gemini." and len(pieces) > 1
    assert s.finish_reason == "stop"
    assert server.received[0].path == "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
    assert not server.rejections


def test_function_call_round_trip_in_openai_shape(server):
    m = make(server)
    reply = m("Weather in Paris?", tools=[WEATHER])
    assert isinstance(reply, dict)
    (call,) = reply["tool_calls"]
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    history = [{"role": "user", "content": "Weather in Paris?"}, reply]
    result = {"role": "tool", "tool_call_id": call["id"], "content": '{"celsius": 18}'}
    assert m(result, history=history, tools=[WEATHER]) == "Hello from Gemini."
    assert not server.rejections
    turn = server.received[1].body["contents"][2]
    assert turn == {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"celsius": 18}}}]}


def test_streamed_function_call_ends_with_tool_calls(server):
    with make(server).stream("Weather?", tools=[WEATHER]) as s:
        assert list(s) == []
    assert s.finish_reason == "tool_calls"
    assert json.loads(s.tool_calls[0]["function"]["arguments"]) == {"city": "Paris"}


def test_429_with_retry_after_is_retried_once(server):
    clock = FakeClock()
    server.script.append(json_answer({"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}},
                                     429, {"Retry-After": "2"}))  # fmt: skip
    assert make(server, clock)("hi") == "Hello from Gemini."
    assert clock.sleeps == [2.0] and len(server.received) == 2


def test_503_overloaded_is_retried_then_raised(server):
    unavailable = json_answer({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}, 503)
    server.script[:] = [unavailable]
    assert make(server)("hi") == "Hello from Gemini."
    server.script[:] = [unavailable] * 3
    with pytest.raises(InternalServerError, match="overloaded"):
        make(server)("hi")


def test_400_is_a_bad_request_error_with_the_servers_message(server):
    with pytest.raises(BadRequestError, match="Unknown name"):
        make(server)("hi", generationConfig={"bogusField": 2})  # not a Gemini field: the API refuses it
    with pytest.raises(ModuleConfigError, match="candidate_count"):
        make(server)("hi", candidate_count=2)  # not a call keyword of this source: refused, never sent
    with pytest.raises(AuthenticationError, match="API key not valid") as info:
        make(server, api_key="AIza-wrong-key-0000000000")("hi")  # Gemini answers a wrong API key with a 400
    assert info.value.status_code == 400


def test_401_is_an_authentication_error(server):
    server.script.append(json_answer({"error": {"code": 401, "message": "Request had invalid authentication credentials.",
                                                "status": "UNAUTHENTICATED"}}, 401))  # fmt: skip
    with pytest.raises(AuthenticationError, match="invalid authentication"):
        make(server)("hi")


def test_the_key_comes_from_google_api_key_or_gemini_api_key(server, monkeypatch):
    for var in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ModuleConfigError, match="GEMINI_API_KEY"):
        OnlineChatModule("gemini", base_url=server.base_url)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    assert OnlineChatModule("gemini", model="g", base_url=server.base_url)("hi") == "Hello from Gemini."
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_KEY", "ignored")
    assert OnlineChatModule("gemini", model="g", base_url=server.base_url)("hi") == "Hello from Gemini."


def test_google_gemini_base_url_is_honoured(server, monkeypatch):
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.base_url)
    m = OnlineChatModule("gemini", model="g", api_key=KEY)
    assert m.build_request("hi").url == server.base_url + "/v1beta/models/g:generateContent"


def _event(value: dict) -> bytes:
    return f"data: {json.dumps(value)}\n\n".encode()


PIECE = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}, "index": 0}]}


def test_a_stream_cut_before_the_finish_reason_raises_and_is_not_retried(server):
    server.script.append(Answer(200, {"Content-Type": "text/event-stream"}, chunks=split_every(_event(PIECE), 7), cut=True))
    with pytest.raises(StreamInterruptedError) as info:
        list(make(server).stream("hi"))
    assert info.value.partial_text == "Hel" and len(server.received) == 1


def test_a_stream_that_ends_without_a_finish_reason_is_cut_short(server):
    server.script.append(Answer(200, {"Content-Type": "text/event-stream"}, chunks=[_event(PIECE)]))
    with pytest.raises(StreamInterruptedError):
        list(make(server).stream("hi"))


def test_an_error_event_mid_stream_is_a_stream_error(server):
    data = _event(PIECE) + _event({"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}})
    server.script.append(Answer(200, {"Content-Type": "text/event-stream"}, chunks=[data]))
    with pytest.raises(StreamError, match="Internal error"):
        list(make(server).stream("hi"))


def test_the_wire_server_rejects_what_gemini_rejects(server):
    def post(body, headers=None, method="generateContent"):
        url = f"{server.base_url}/v1beta/models/g:{method}"
        h = {"x-goog-api-key": KEY, "content-type": "application/json", **(headers or {})}
        return requests.post(url, data=json.dumps(body), headers=h, timeout=5).status_code

    ok = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    assert post(ok) == 200
    assert post(ok, {"x-goog-api-key": ""}) == 403
    assert post(ok, {"x-goog-api-key": "nope"}) == 400
    assert post({"contents": [{"role": "assistant", "parts": [{"text": "hi"}]}]}) == 400
    assert post({"contents": [{"role": "user", "parts": [{"text": "a"}]}, {"role": "user", "parts": [{"text": "b"}]}]}) == 400
    assert post({"contents": [{"role": "user", "parts": [{"video": "x"}]}]}) == 400
    assert post({**ok, "generationConfig": {"max_tokens": 5}}) == 400
    assert post({**ok, "system": "x"}) == 400
