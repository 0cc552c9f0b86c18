"""OnlineChatModule against a real fault-injecting server on 127.0.0.1: what is sent, what comes back."""

from __future__ import annotations

import gzip
import json
import random

import pytest
from fault_server import FakeClock, FaultServer, Raw, Reply, Stream, completion, error_body, split_at, sse_events

from modules import OnlineChatModule
from modules.errors import (
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    BadRequestError,
    StreamError,
    StreamInterruptedError,
)
from modules.online.retry import RetryPolicy
from prompter import AlpacaPrompter, ChatPrompter

KEY = "sk-test-0123456789abcdef"
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}


@pytest.fixture
def server():
    """A fresh fault-injecting server; its script starts empty (every request answered 'ok')."""
    with FaultServer() as srv:
        yield srv


@pytest.fixture
def clock():
    """A fake clock whose sleep records waits instead of waiting."""
    return FakeClock()


def make(server: FaultServer, clock: FakeClock | None = None, **kw) -> OnlineChatModule:
    clock = clock or FakeClock()
    kw.setdefault("retry", RetryPolicy(sleep=clock.sleep, clock=clock.clock, random=lambda: 0.0))
    return OnlineChatModule(base_url=server.base_url, model="test-model", api_key=KEY, **kw)


# -- what is sent -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompter", "input", "history"),
    [
        pytest.param(AlpacaPrompter("Translate {input} into French."), "good morning", None, id="alpaca"),
        pytest.param(
            ChatPrompter("You answer about {topic}."),
            {"topic": "cats", "input": "Why purr?"},
            [["Hi", "Hello!"]],
            id="chat-slots-history",
        ),
        pytest.param(ChatPrompter({"system": "Be terse.", "user": "Q: {input}"}), "2+2?", None, id="chat-dict"),
        pytest.param(None, "plain question", None, id="empty"),
    ],
)
def test_server_receives_the_prompters_openai_body_plus_model_and_options(server, prompter, input, history):
    m = make(server).prompt(prompter)
    assert m(input, history=history, temperature=0.2, max_tokens=5, stop=["\n\n"]) == "ok"
    expected = {
        **m.prompter.generate_prompt(input, history=history, format="openai"),
        "model": "test-model",
        "temperature": 0.2,
        "max_tokens": 5,
        "stop": ["\n\n"],
    }
    assert server.requests[0].json() == expected
    assert m.build_request(input, history=history, temperature=0.2, max_tokens=5, stop=["\n\n"]).body == expected


def test_request_line_and_headers(server):
    m = make(server, headers={"X-Trace": "abc"})
    m("hi")
    req = server.requests[0]
    assert (req.method, req.path) == ("POST", "/v1/chat/completions")
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.headers["content-type"] == "application/json"
    assert req.headers["x-trace"] == "abc"
    assert KEY not in req.path


def test_tools_are_sent_and_a_tool_call_comes_back_as_the_assistant_message(server):
    server.script.append(Reply(body=completion(text=None, tool_calls=[CALL])))
    m = make(server).prompt(ChatPrompter("You can call tools."))
    reply = m("Weather in Paris?", tools=[WEATHER_TOOL])
    assert server.requests[0].json()["tools"] == [WEATHER_TOOL]
    assert reply == {"role": "assistant", "content": None, "tool_calls": [CALL]}
    # the message goes straight back into the history, with the tool's result
    m("and now?", history=[["Weather in Paris?", ""]])  # a plain follow-up still works
    history = [{"role": "user", "content": "Weather in Paris?"}, reply,
               {"role": "tool", "tool_call_id": "call_1", "content": "18°C"}]  # fmt: skip
    assert m("Summarise.", history=history, tools=[WEATHER_TOOL]) == "ok"
    sent = server.requests[-1].json()["messages"]
    assert sent[-2]["role"] == "tool" and sent[-3]["tool_calls"][0]["id"] == "call_1"


def test_module_options_and_per_call_options_merge_per_call_wins(server):
    m = make(server, generation={"temperature": 0.7, "top_p": 0.9})
    m("hi", temperature=0.1, model="other-model")
    body = server.requests[0].json()
    assert (body["temperature"], body["top_p"], body["model"]) == (0.1, 0.9, "other-model")


def test_share_uses_the_same_pool_with_another_prompter(server):
    m = make(server).prompt("You are A.")
    m2 = m.share(prompt="You are B.")
    m("x")
    m2("y")
    systems = [r.json()["messages"][0]["content"] for r in server.requests]
    assert "You are A." in systems[0] and "You are B." in systems[1]
    assert m._backend is m2._backend
    assert server.total_connections == 1  # keep-alive: one connection served both handles


# -- what comes back ---------------------------------------------------------------------


def test_invalid_json_answer_is_a_validation_error(server):
    server.script.append(Reply(body="<html>proxy error</html>"))
    with pytest.raises(APIResponseValidationError, match="not JSON"):
        make(server)("hi")


def test_stream_yields_pieces_and_remembers_the_whole(server):
    server.script.append(Stream(sse_events("Hello there, world!")))
    m = make(server)
    s = m.stream("hi", temperature=0)
    assert list(s) == ["Hello ", "there, ", "world!"]
    assert (s.text, s.finish_reason) == ("Hello there, world!", "stop")
    body = server.requests[0].json()
    assert body["stream"] is True and body["temperature"] == 0
    assert server.requests[0].headers["accept"] == "text/event-stream"


def test_stream_accumulates_tool_call_deltas_by_index(server):
    second = {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": '{"tz": "CET"}'}}
    server.script.append(Stream(sse_events("", tool_calls=[CALL, second])))
    s = make(server).stream("weather and time?", tools=[WEATHER_TOOL])
    assert list(s) == []
    assert s.tool_calls == [CALL, second]
    assert s.finish_reason == "tool_calls"
    assert s.message == {"role": "assistant", "content": None, "tool_calls": [CALL, second]}


def test_stream_interleaved_tool_call_deltas():
    """Deltas for two calls interleaved, ids repeated by the provider, arguments in many pieces."""
    from modules.online.sse import ChatStreamState, ServerSentEvent

    def ev(calls, finish=None):
        data = {"choices": [{"index": 0, "delta": {"tool_calls": calls}, "finish_reason": finish}]}
        return ServerSentEvent(json.dumps(data))

    state = ChatStreamState()
    for e in [
        ev([{"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": ""}}]),
        ev([{"index": 1, "id": "b", "type": "function", "function": {"name": "g", "arguments": '{"y"'}}]),
        ev([{"index": 0, "id": "a", "function": {"arguments": '{"x": '}}]),
        ev([{"index": 1, "function": {"arguments": ": 2}"}}]),
        ev([{"index": 0, "function": {"arguments": "1}"}}], finish="tool_calls"),
    ]:
        state.on_event(e)
    assert [c["function"] for c in state.tool_calls()] == [
        {"name": "f", "arguments": '{"x": 1}'},
        {"name": "g", "arguments": '{"y": 2}'},
    ]
    assert [c["id"] for c in state.tool_calls()] == ["a", "b"]


@pytest.mark.parametrize(
    "error_event",
    [
        pytest.param(b'event: error\ndata: {"error": {"message": "overloaded"}}\n\n', id="event-error"),
        pytest.param(b'data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n', id="data-error"),
    ],
)
def test_error_event_mid_stream_raises_with_the_partial_text(server, error_event):
    events = sse_events("one two three")
    server.script.append(Stream([*events[:3], error_event, *events[3:]]))
    s = make(server).stream("count")
    pieces = []
    with pytest.raises(StreamError, match="overloaded") as info:
        for piece in s:
            pieces.append(piece)
    assert pieces == ["one ", "two "]
    assert info.value.partial_text == "one two "


def test_a_json_answer_to_a_stream_request_is_read_as_a_completion(server):
    server.script += [Reply(body=error_body("stream not supported")), Reply(body=completion("whole"))]
    with pytest.raises(APIError, match="stream not supported"):
        make(server).stream("hi")
    s = make(server).stream("hi")
    assert (list(s), s.finish_reason) == (["whole"], "stop")


# -- cuts and chunkings over real HTTP ----------------------------------------------------------

TEXT = "héllo wörld, 日本語 🎉 done"


def _finish_end(full: bytes) -> int:
    at = full.index(b'"finish_reason": "stop"')
    return full.index(b"\n\n", at) + 2


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "close-delimited"])
def test_a_stream_cut_at_any_byte_raises_unless_it_was_complete(server, chunked):
    full = b"".join(sse_events(TEXT))
    complete_from = _finish_end(full)
    m = make(server)
    for cut in range(len(full) + 1):
        server.script.append(Stream([full[:cut]], chunked=chunked, cut=True))
        s = m.stream("hi")
        if cut >= complete_from:
            assert "".join(s) == TEXT, cut
            assert s.finish_reason == "stop"
        else:
            got: list[str] = []
            with pytest.raises(StreamInterruptedError) as info:
                got.extend(s)
            assert TEXT.startswith(info.value.partial_text), cut
            assert "".join(got) == info.value.partial_text
    assert server.attempts == len(full) + 1  # never retried


def test_random_chunk_writes_over_http_give_the_same_text(server):
    full = b"".join(sse_events(TEXT)).replace(b"\n", b"\r\n")
    rng = random.Random(1234)
    m = make(server)
    for _ in range(40):
        cuts = [rng.randrange(1, len(full)) for _ in range(rng.randrange(1, 40))]
        server.script.append(Stream(split_at(full, cuts), chunked=rng.random() < 0.7))
        assert "".join(m.stream("hi")) == TEXT


def test_keepalive_comments_and_crlf_are_ignored(server):
    events = sse_events("a b")
    pieces = [b": ping\r\n\r\n", *[e.replace(b"\n", b"\r") for e in events[:2]], b":keep-alive\n\n", *events[2:]]
    server.script.append(Stream(pieces))
    assert "".join(make(server).stream("hi")) == "a b"


def test_bad_request_is_not_retried_and_names_the_fault(server):
    server.script.append(Reply(400, error_body("max_tokens is too large"), {"x-request-id": "req_42"}))
    with pytest.raises(BadRequestError) as info:
        make(server)("hi", max_tokens=10**9)
    err = info.value
    assert (err.status_code, err.request_id) == (400, "req_42")
    assert err.body == error_body("max_tokens is too large")
    assert str(err) == "Error code: 400 - max_tokens is too large (request id: req_42)"
    assert server.attempts == 1


def test_a_json_answer_cut_at_any_byte_raises_and_a_cut_body_is_retried(server):
    body = json.dumps(completion("complete answer")).encode()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    whole = head + body
    m = make(server, max_retries=1)
    for cut in range(len(whole)):
        before = server.attempts
        server.script += [Raw(whole[:cut]), Raw(whole[:cut])]
        if cut >= len(head):  # headers whole, body short: a connection error, retried
            with pytest.raises(APIConnectionError):
                m("hi")
            assert server.attempts - before == 2, cut
        else:  # http.client may accept a cut header block as complete: then the empty body is invalid
            with pytest.raises((APIConnectionError, APIResponseValidationError)):
                m("hi")
        server.script.clear()
    server.script.append(Raw(whole))
    assert m("hi") == "complete answer"


@pytest.mark.parametrize(
    ("garbage", "error"),
    [
        pytest.param(b"HTTP/1.1 abc\r\n\r\n", APIConnectionError, id="bad-status"),
        pytest.param(b"SMTP ready\r\n", APIConnectionError, id="not-http"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n{}", APIResponseValidationError, id="bad-length"),
    ],
)
def test_a_malformed_answer_raises(server, garbage, error):
    server.script += [Raw(garbage)] * 3
    with pytest.raises(error):
        make(server)("hi")


def test_a_gzip_encoded_stream_is_decoded(server):
    packed = gzip.compress(b"".join(sse_events("squeezed text arrives whole")))
    pieces = split_at(packed, range(7, len(packed), 7))
    server.script.append(Stream(pieces, headers={"Content-Encoding": "gzip"}))
    assert "".join(make(server).stream("hi")) == "squeezed text arrives whole"
