"""source="ollama" (native /api/chat, NDJSON streams) against a loopback server that rejects what Ollama rejects."""

from __future__ import annotations

import json

import pytest
import requests
from fault_server import FakeClock
from wire.common import Answer, json_answer, split_every
from wire.ollama import MODEL, OllamaServer

from modules import OnlineChatModule
from modules.errors import (
    AuthenticationError,
    BadRequestError,
    ModuleConfigError,
    NotFoundError,
    StreamError,
    StreamInterruptedError,
)
from modules.online.ollama import NDJSONDecoder
from modules.online.retry import RetryPolicy
from modules.online.sources import SOURCES, resolve_base_url

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
    with OllamaServer() as srv:
        yield srv


def make(server: OllamaServer, clock: FakeClock | None = None, **kw) -> OnlineChatModule:
    clock = clock or FakeClock()
    kw.setdefault("retry", RetryPolicy(sleep=clock.sleep, clock=clock.clock, random=lambda: 0.0))
    return OnlineChatModule("ollama", model=MODEL, base_url=server.base_url, **kw)


def test_plain_call_sends_the_image_as_base64_beside_the_text(server, monkeypatch):
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    m = make(server).prompt("You are terse.")
    question = [{"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                              {"type": "image_url", "image_url": {"url": PNG}}]}]  # fmt: skip
    assert m(question, max_tokens=20, stop="END", temperature=0.2) == "Hello from Ollama."
    (sent,) = server.received
    assert sent.path == "/api/chat" and "authorization" not in sent.headers
    assert sent.body["stream"] is False
    assert sent.body["messages"][0]["role"] == "system" and "You are terse." in sent.body["messages"][0]["content"]
    assert sent.body["messages"][1] == {"role": "user", "content": "What is this?", "images": ["iVBORw0KGgo="]}
    assert sent.body["options"] == {"num_predict": 20, "temperature": 0.2, "stop": ["END"]}


def test_whole_answer_has_finish_reason_and_token_counts(server):
    completion = make(server)._complete(make(server).build_request("hi"))
    assert completion.finish_reason == "stop"
    assert completion.usage["prompt_tokens"] == 11 and completion.usage["completion_tokens"] == 6
    assert completion.raw["model"] == MODEL


def test_ndjson_stream_yields_text_pieces(server):
    with make(server).stream("hi") as s:
        pieces = list(s)
    assert "".join(pieces) == "Hello from Ollama." and len(pieces) > 1
    assert s.finish_reason == "stop" and server.received[0].body["stream"] is True


def test_tool_call_round_trip_in_openai_shape(server):
    m = make(server)
    reply = m("Weather in Paris?", tools=[WEATHER])
    assert isinstance(reply, dict)
    (call,) = reply["tool_calls"]
    assert call["id"].startswith("call_") and call["type"] == "function"
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    history = [{"role": "user", "content": "Weather in Paris?"}, reply]
    result = {"role": "tool", "tool_call_id": call["id"], "content": "18 C"}
    assert m(result, history=history, tools=[WEATHER]) == "Hello from Ollama."
    assert not server.rejections
    assert server.received[1].body["messages"][-1] == {"role": "tool", "content": "18 C", "tool_name": "get_weather"}
    assert server.received[1].body["messages"][-2]["tool_calls"][0]["function"]["arguments"] == {"city": "Paris"}


def test_streamed_tool_call(server):
    with make(server).stream("Weather?", tools=[WEATHER]) as s:
        assert list(s) == []
    assert s.finish_reason == "tool_calls"
    assert json.loads(s.tool_calls[0]["function"]["arguments"]) == {"city": "Paris"}


def test_429_with_retry_after_is_retried_once(server):
    clock = FakeClock()
    server.script.append(json_answer({"error": "too many requests"}, 429, {"Retry-After": "1"}))
    assert make(server, clock)("hi") == "Hello from Ollama."
    assert clock.sleeps == [1.0] and len(server.received) == 2


def test_503_is_retried(server):
    server.script.append(json_answer({"error": "server busy, please try again"}, 503))
    assert make(server)("hi") == "Hello from Ollama."


def test_400_and_404_are_typed_errors_with_ollamas_message(server):
    with pytest.raises(BadRequestError, match="format"):
        make(server)("hi", format=42)  # Ollama takes "json" or a JSON schema
    assert make(server)("hi", format="json", keep_alive="5m", options={"num_ctx": 4096}) == "Hello from Ollama."
    assert server.received[-1].body["options"] == {"num_ctx": 4096}
    with pytest.raises(ModuleConfigError, match="options"):
        make(server)("hi", options="fast")
    with pytest.raises(NotFoundError, match="try pulling it first"):
        OnlineChatModule("ollama", model="missing", base_url=server.base_url)("hi")


def test_401_with_a_wrong_key_is_an_authentication_error():
    with OllamaServer(key="ollama-key-0123456789abcdef") as srv:
        assert make(srv, api_key="ollama-key-0123456789abcdef")("hi") == "Hello from Ollama."
        with pytest.raises(AuthenticationError):
            make(srv, api_key="wrong-key-0123456789")("hi")


def test_n_is_refused():
    with pytest.raises(ModuleConfigError, match="'n'"):
        OnlineChatModule("ollama", model=MODEL).build_request("hi", n=2)


def test_ollama_host_is_read_like_the_ollama_client_reads_it(monkeypatch):
    source = SOURCES["ollama"]
    assert resolve_base_url(source, None, {}) == "http://localhost:11434"
    assert resolve_base_url(source, None, {"OLLAMA_HOST": "0.0.0.0"}) == "http://0.0.0.0:11434"
    assert resolve_base_url(source, None, {"OLLAMA_HOST": "gpu-box:8080"}) == "http://gpu-box:8080"
    assert resolve_base_url(source, None, {"OLLAMA_HOST": "https://o.example.com"}) == "https://o.example.com:443"
    assert resolve_base_url(source, None, {"OLLAMA_HOST": "http://o.example.com/"}) == "http://o.example.com:80"
    assert resolve_base_url(source, None, {"OLLAMA_HOST": ":5678"}) == "http://127.0.0.1:5678"
    assert resolve_base_url(source, None, {"OLLAMA_HOST": "[::1]:5678"}) == "http://[::1]:5678"
    assert resolve_base_url(source, None, {"OLLAMA_HOST": "h:1/proxy/"}) == "http://h:1/proxy"
    with pytest.raises(ModuleConfigError, match="OLLAMA_HOST"):
        resolve_base_url(source, None, {"OLLAMA_HOST": "h:notaport"})
    for broken in ("::1", "http://[::1"):
        with pytest.raises(ModuleConfigError, match="OLLAMA_HOST"):
            resolve_base_url(source, None, {"OLLAMA_HOST": broken})
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    assert OnlineChatModule("ollama").build_request("hi").url == "http://127.0.0.1:9/api/chat"
    assert OnlineChatModule("ollama-openai").build_request("hi").url == "http://localhost:11434/v1/chat/completions"


def _lines(*values: dict) -> bytes:
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


PIECE = {"model": MODEL, "message": {"role": "assistant", "content": "Hel"}, "done": False}


def test_a_stream_cut_before_done_raises_and_is_not_retried(server):
    server.script.append(Answer(200, {"Content-Type": "application/x-ndjson"}, chunks=split_every(_lines(PIECE), 5), cut=True))
    with pytest.raises(StreamInterruptedError) as info:
        list(make(server).stream("hi"))
    assert info.value.partial_text == "Hel" and len(server.received) == 1


def test_an_error_line_mid_stream_is_a_stream_error(server):
    server.script.append(Answer(200, {"Content-Type": "application/x-ndjson"}, chunks=[_lines(PIECE, {"error": "out of memory"})]))
    with pytest.raises(StreamError, match="out of memory") as info:
        list(make(server).stream("hi"))
    assert info.value.partial_text == "Hel"


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_ndjson_lines_split_anywhere_decode_the_same(size):
    data = _lines(PIECE, {"x": "ünï\ncode"}, {"done": True}) + b"\n"
    decoder = NDJSONDecoder()
    events = [e.data for i in range(0, len(data), size) for e in decoder.feed(data[i : i + size])]
    assert [json.loads(e) for e in events] == [PIECE, {"x": "ünï\ncode"}, {"done": True}]
    assert decoder.close() is False


def test_the_wire_server_rejects_what_ollama_rejects(server):
    def post(body):
        return requests.post(server.base_url + "/api/chat", data=json.dumps(body), timeout=5).status_code

    ok = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": False}
    assert post(ok) == 200
    assert post({**ok, "model": "nope"}) == 404
    assert post({k: v for k, v in ok.items() if k != "model"}) == 400
    assert post({**ok, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}) == 400
    assert post({**ok, "messages": [{"role": "user", "content": "x", "images": ["not base64!"]}]}) == 400
    assert post({**ok, "messages": [{"role": "tool", "content": "x"}]}) == 400


def test_the_size_cap_holds_for_ndjson_streams_and_long_lines(server):
    from modules.errors import APIResponseValidationError

    long_line = json.dumps({**PIECE, "message": {"role": "assistant", "content": "x" * 5000}}).encode()
    server.script.append(Answer(200, {"Content-Type": "application/x-ndjson"}, chunks=split_every(long_line, 512)))
    with pytest.raises(APIResponseValidationError, match="max_response_bytes|longer than"):
        list(make(server, max_response_bytes=1000).stream("hi"))
    decoder = NDJSONDecoder(max_line=100)
    with pytest.raises(APIResponseValidationError, match="longer than 100"):
        for i in range(0, len(long_line), 30):
            decoder.feed(long_line[i : i + 30])
