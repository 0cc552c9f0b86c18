"""The OpenAI-compatible server, over real HTTP on 127.0.0.1, with real clients.

Clients: the official ``openai`` package, our own ``OnlineChatModule`` and raw
``httpx`` for what a well-behaved client never sends (huge bodies, bad JSON,
dropped connections).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

USER = [{"role": "user", "content": "Why do cats purr?"}]


@pytest.fixture(scope="module")
def client(served_module: TrainableModule) -> openai.OpenAI:  # noqa: F811
    """The official OpenAI client, pointed at the served tiny model, without retries."""
    return openai.OpenAI(base_url=served_module.url, api_key="unused", max_retries=0, timeout=30)


def _alone(module: TrainableModule, messages: list[dict[str, Any]], max_tokens: int = 8) -> str:
    """What the module answers in-process, with nothing else running."""
    return module.generate(module.prepare(messages, max_new_tokens=max_tokens)).text


# -- the official client, every endpoint -----------------------------------------------------------


def test_chat_completion(client: openai.OpenAI, served_module: TrainableModule) -> None:  # noqa: F811
    r = client.chat.completions.create(model="tiny", messages=USER, max_tokens=8)
    choice = r.choices[0]
    assert choice.message.role == "assistant" and choice.message.content == _alone(served_module, USER)
    assert choice.finish_reason in ("stop", "length")
    assert r.usage.completion_tokens <= 8 and r.usage.prompt_tokens > 0 and r.object == "chat.completion"


def test_chat_stream_equals_the_whole_answer(client: openai.OpenAI, served_module: TrainableModule) -> None:  # noqa: F811
    stream = client.chat.completions.create(model="tiny", messages=USER, max_tokens=8, stream=True)
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == _alone(served_module, USER)
    assert chunks[-1].choices[0].finish_reason in ("stop", "length")


def test_stream_usage_on_request(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="tiny", messages=USER, max_tokens=5, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens <= 5
    assert chunks[-1].usage.total_tokens == chunks[-1].usage.prompt_tokens + chunks[-1].usage.completion_tokens


def test_chat_with_tools_is_accepted(client: openai.OpenAI) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "21 C"},
    ]
    r = client.chat.completions.create(model="tiny", messages=history, tools=tools, max_tokens=4)
    assert r.choices[0].finish_reason in ("stop", "length", "tool_calls")


def test_developer_role_is_read_as_system(client: openai.OpenAI) -> None:
    def ask(role: str) -> str | None:
        messages = [{"role": role, "content": "Be brief."}, *USER]
        return client.chat.completions.create(model="tiny", messages=messages, max_tokens=6).choices[0].message.content

    assert ask("developer") == ask("system")


def test_completions(client: openai.OpenAI, served_module: TrainableModule) -> None:  # noqa: F811
    r = client.completions.create(model="tiny", prompt="The quick brown fox", max_tokens=6)
    expected = served_module.generate(served_module.prepare_text("The quick brown fox", max_new_tokens=6)).text
    assert r.choices[0].text == expected
    streamed = client.completions.create(model="tiny", prompt="The quick brown fox", max_tokens=6, stream=True)
    assert "".join(c.choices[0].text for c in streamed) == expected


def test_models(client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list()] == ["tiny"]
    assert client.models.retrieve("tiny").id == "tiny"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-9")


# -- typed errors ---------------------------------------------------------------------------------------


ERRORS = [
    pytest.param({"model": "gpt-9", "messages": USER}, openai.NotFoundError, "model_not_found", id="unknown-model-404"),
    pytest.param({"model": "tiny", "messages": []}, openai.BadRequestError, None, id="no-messages-400"),
    pytest.param(
        {"model": "tiny", "messages": [{"role": "wizard", "content": "x"}]},
        openai.BadRequestError,
        None,
        id="bad-role-400",
    ),
    pytest.param(
        {"model": "tiny", "messages": USER, "temperature": 7},
        openai.BadRequestError,
        None,
        id="bad-temperature-400",
    ),
    pytest.param(
        {"model": "tiny", "messages": [{"role": "user", "content": "cats " * 3000}]},
        openai.BadRequestError,
        "context_length_exceeded",
        id="too-long-400",
    ),
    pytest.param(
        {"model": "tiny", "messages": USER, "max_tokens": 10_000},
        openai.BadRequestError,
        "context_length_exceeded",
        id="max-tokens-over-context-400",
    ),
]


@pytest.mark.parametrize("kwargs, error, code", ERRORS)
def test_errors_are_typed(client: openai.OpenAI, kwargs: dict[str, Any], error: type, code: str | None) -> None:
    for stream in (False, True):
        with pytest.raises(error) as info:
            client.chat.completions.create(**kwargs, stream=stream)
        body = info.value.body
        assert set(body) == {"message", "type", "param", "code"} and body["message"]
        assert "Traceback" not in body["message"] and len(body["message"]) <= 1003
        if code:
            assert body["code"] == code


COMPLETION_ERRORS = [
    pytest.param({"model": "gpt-9", "prompt": "hi"}, openai.NotFoundError, "model_not_found", id="unknown-model-404"),
    pytest.param({"model": "tiny", "prompt": "hi", "temperature": 7}, openai.BadRequestError, None,
                 id="bad-temperature-400"),
    pytest.param({"model": "tiny", "prompt": "cats " * 3000}, openai.BadRequestError, "context_length_exceeded",
                 id="too-long-400"),
    pytest.param({"model": "tiny", "prompt": "hi", "max_tokens": 10_000}, openai.BadRequestError,
                 "context_length_exceeded", id="max-tokens-over-context-400"),
]


@pytest.mark.parametrize("kwargs, error, code", COMPLETION_ERRORS)
def test_completion_errors_are_typed(client: openai.OpenAI, kwargs: dict[str, Any], error: type, code: str | None) -> None:
    for stream in (False, True):
        with pytest.raises(error) as info:
            client.completions.create(**kwargs, stream=stream)
        body = info.value.body
        assert set(body) == {"message", "type", "param", "code"} and body["message"]
        assert "Traceback" not in body["message"]
        if code:
            assert body["code"] == code


def test_context_error_names_the_token_counts(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="tiny", messages=USER, max_tokens=5000)
    assert "max_tokens is 5000" in info.value.body["message"] and "2048 tokens" in info.value.body["message"]


def test_raw_http_errors_use_the_envelope(served_module: TrainableModule) -> None:  # noqa: F811
    base = served_module.url
    with httpx.Client(timeout=30) as http:
        big = http.post(
            base + "/chat/completions",
            content=b'{"model": "tiny", "messages": [{"role": "user", "content": "' + b"a" * 2_100_000 + b'"}]}',
            headers={"content-type": "application/json"},
        )
        assert big.status_code == 413 and big.json()["error"]["code"] == "request_too_large"

        def chunked():  # no Content-Length: the limit must hold as the body streams in
            yield b'{"model": "tiny", "messages": [{"role": "user", "content": "'
            yield from (b"a" * 100_000 for _ in range(30))
            yield b'"}]}'

        big = http.post(base + "/chat/completions", content=chunked(), headers={"content-type": "application/json"})
        assert big.status_code == 413 and big.json()["error"]["code"] == "request_too_large"
        bad_json = http.post(
            base + "/chat/completions", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert bad_json.status_code == 400 and bad_json.json()["error"]["type"] == "invalid_request_error"
        missing = http.get(base + "/nowhere")
        assert missing.status_code == 404 and "error" in missing.json()
        wrong_method = http.get(base + "/chat/completions")
        assert wrong_method.status_code == 405 and "error" in wrong_method.json()
        assert http.get(base.removesuffix("/v1") + "/health").json()["status"] == "ok"


def test_over_the_concurrency_limit_is_429_with_retry_after(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, name="tiny").start(serve=True, max_concurrency=1)
    try:
        with httpx.Client(timeout=30) as http:
            body = {"model": "tiny", "messages": USER, "max_tokens": 400, "stream": True}
            with http.stream("POST", module.url + "/chat/completions", json=body) as first:
                lines = first.iter_lines()  # keep the iterator: dropping it closes the connection
                next(lines)  # the first request is in flight
                second = http.post(module.url + "/chat/completions", json={**body, "stream": False})
                assert second.status_code == 429 and second.headers["retry-after"] == "1"
                assert second.json()["error"]["type"] == "rate_limit_error"
                client = openai.OpenAI(base_url=module.url, api_key="x", max_retries=0)
                with pytest.raises(openai.RateLimitError):
                    client.chat.completions.create(model="tiny", messages=USER, max_tokens=2)
    finally:
        module.stop()


# -- round trip through our own OnlineChatModule ---------------------------------------------------


def test_online_chat_module_round_trip(served_module: TrainableModule) -> None:  # noqa: F811
    from modules.online.module import OnlineChatModule
    from prompter import ChatPrompter

    p = ChatPrompter("You answer questions about {topic}.")
    online = OnlineChatModule(source="openai-compatible", base_url=served_module.url, model="tiny", api_key="x")
    online.prompt(p)
    value = {"topic": "cats", "input": "Why purr?"}
    body = p.generate_prompt(value, format="openai")
    expected = _alone(served_module, body["messages"], max_tokens=6)
    assert online(value, max_tokens=6) == expected
    assert "".join(online.stream(value, max_tokens=6)) == expected
    from modules.errors import NotFoundError

    with pytest.raises(NotFoundError):
        OnlineChatModule(base_url=served_module.url, model="gpt-9", api_key="x", max_retries=0)("hi")


# -- concurrency: nothing lost, duplicated or mixed ----------------------------------------------------


@pytest.fixture(scope="module")
def batched_module(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    """A second server on the tiny model that batches concurrent greedy requests (up to 32)."""
    module = TrainableModule(tiny_model_path, name="tiny", max_new_tokens=8, max_batch_size=32).start(serve=True)
    yield module
    module.stop()


@pytest.mark.parametrize("mode", ["serialised", "batched"])
def test_32_concurrent_prompts_each_get_their_own_answer(
    mode: str,
    served_module: TrainableModule,  # noqa: F811
    request: pytest.FixtureRequest,
) -> None:
    module = served_module if mode == "serialised" else request.getfixturevalue("batched_module")
    client = openai.OpenAI(base_url=module.url, api_key="unused", max_retries=0, timeout=60)
    prompts = [[{"role": "user", "content": f"Question number {i}: tell me about item {i * 7}."}] for i in range(32)]
    alone = [_alone(served_module, msgs, max_tokens=6) for msgs in prompts]
    assert len(set(alone)) > 16  # distinct prompts give distinct answers, so mixing would show

    def ask(i: int) -> str:
        if i % 2:
            stream = client.chat.completions.create(model="tiny", messages=prompts[i], max_tokens=6, stream=True)
            return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        r = client.chat.completions.create(model="tiny", messages=prompts[i], max_tokens=6)
        return r.choices[0].message.content or ""

    with ThreadPoolExecutor(32) as pool:
        together = list(pool.map(ask, range(32)))
    assert together == alone


# -- streams that end early -----------------------------------------------------------------------------


def _in_flight(module: TrainableModule) -> int:
    return int(httpx.get(module.url.removesuffix("/v1") + "/health").json()["in_flight"])


def test_client_disconnect_stops_its_generation(served_module: TrainableModule) -> None:  # noqa: F811
    body = {"model": "tiny", "messages": USER, "max_tokens": 1800, "stream": True}
    with httpx.Client(timeout=30) as http:
        with http.stream("POST", served_module.url + "/chat/completions", json=body) as response:
            lines = response.iter_lines()
            next(lines), next(lines)
            assert _in_flight(served_module) == 1
    t0 = time.perf_counter()
    while _in_flight(served_module) and time.perf_counter() - t0 < 5:
        time.sleep(0.02)
    assert _in_flight(served_module) == 0, "the generation kept running after the client left"
    # The model is free again, long before 1800 tokens could have been generated.
    assert served_module._backend.lock.acquire(timeout=2)
    served_module._backend.lock.release()


def test_client_giving_up_on_a_plain_request_stops_its_generation(served_module: TrainableModule) -> None:  # noqa: F811
    """Counted in decoding steps, not in time: the tiny model ends this answer by itself after
    about 700 tokens, which an idle machine generates within the client's patience. So the test holds
    the model (its turn lock) until the client has given up and the server has flagged the
    request, then lets it go: a cancelled request takes a step at most, a running one hundreds."""
    b = served_module._backend
    state = b.server.app.state.prompter
    body = {"model": "tiny", "messages": USER, "max_tokens": 1800}
    steps = b.batcher.step_count
    with b.lock:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(served_module.url + "/chat/completions", json=body, timeout=httpx.Timeout(30, read=0.5))
        t0 = time.perf_counter()
        while not (state.cancels and all(c.is_set() for c in list(state.cancels))) and time.perf_counter() - t0 < 10:
            time.sleep(0.02)
    t0 = time.perf_counter()
    while _in_flight(served_module) and time.perf_counter() - t0 < 10:
        time.sleep(0.02)
    assert _in_flight(served_module) == 0, "the generation kept running after the client left"
    assert b.batcher.step_count - steps <= 2, "the request was generated after its client had left"


def test_stop_ends_requests_in_flight_with_an_error_never_a_silent_cut(tiny_model_path: Path) -> None:  # noqa: F811
    """Three streams and two plain requests are running or queued when stop() is called."""
    module = TrainableModule(tiny_model_path, name="tiny").start(serve=True)
    url = module.url
    endings: list[str] = []
    statuses: list[tuple[int, Any]] = []

    def read_stream() -> None:
        body = {"model": "tiny", "messages": USER, "max_tokens": 1800, "stream": True}
        last = ""
        try:
            with httpx.stream("POST", url + "/chat/completions", json=body, timeout=30) as response:
                for line in response.iter_lines():
                    if line.startswith("data: "):
                        last = line
        except httpx.HTTPError as exc:
            last = f"transport error: {exc!r}"
        endings.append(last)

    def plain() -> None:
        body = {"model": "tiny", "messages": USER, "max_tokens": 1800}
        r = httpx.post(url + "/chat/completions", json=body, timeout=30)
        statuses.append((r.status_code, r.json()))

    threads = [threading.Thread(target=read_stream) for _ in range(3)] + [
        threading.Thread(target=plain) for _ in range(2)
    ]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    while _in_flight(module) < 5 and time.perf_counter() - t0 < 10:
        time.sleep(0.02)
    module.stop()
    for t in threads:
        t.join(20)
    assert len(endings) == 3 and len(statuses) == 2
    for last in endings:
        assert last == "data: [DONE]" or '"error"' in last, f"silent cut, last event: {last[:200]}"
    assert any('"error"' in last for last in endings)
    errors = [json.loads(last[6:])["error"] for last in endings if '"error"' in last]
    errors += [body["error"] for status, body in statuses if status != 200]
    assert all(e["type"] == "server_error" and e["code"] == "server_shutting_down" for e in errors)
    assert all(status in (200, 503) for status, _ in statuses)


# -- tool calls over the wire (a scripted backend: random weights never call tools) ----------------


class _ToolCallingModule:
    """A servable module whose model always calls get_weather: it checks the wire format only."""

    name = "scripted"
    call = {"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}

    def prepare(self, messages: Any, tools: Any = None, **generation: Any) -> Any:
        return messages

    def prepare_text(self, prompt: str, **generation: Any) -> Any:
        return prompt

    def generate(self, request: Any, cancel: Any = None) -> Any:
        from modules.base import Completion

        return Completion(text="", tool_calls=(self.call,), finish_reason="tool_calls", usage={})

    def generate_stream(self, request: Any, cancel: Any = None, usage: Any = None) -> Any:
        from modules.base import StreamDelta

        yield StreamDelta(text="")
        yield StreamDelta(tool_calls=(self.call,), finish_reason="tool_calls")


def test_tool_calls_reach_the_openai_client_in_openai_shape() -> None:
    from modules.server.app import ServerThread, create_app

    server = ServerThread(create_app(_ToolCallingModule())).start()
    try:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
        r = client.chat.completions.create(model="scripted", messages=USER)
        call = r.choices[0].message.tool_calls[0]
        assert r.choices[0].finish_reason == "tool_calls" and r.choices[0].message.content is None
        assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
            "call_abc",
            "get_weather",
            {"city": "Paris"},
        )
        chunks = list(client.chat.completions.create(model="scripted", messages=USER, stream=True))
        deltas = [c.choices[0].delta.tool_calls for c in chunks if c.choices and c.choices[0].delta.tool_calls]
        assert deltas[0][0].index == 0 and deltas[0][0].function.name == "get_weather"
        assert chunks[-1].choices[0].finish_reason == "tool_calls"
    finally:
        server.stop()


# -- 400s that say what is wrong ------------------------------------------------------------------------

_CALL_WITHOUT_ID = {"type": "function", "function": {"name": "get_weather", "arguments": "{}"}}

BAD_BODIES = [
    # (id, path, raw body or JSON value, content type, message pattern, param)
    ("form-content-type", "/chat/completions", b'{"model": "tiny"}', "application/x-www-form-urlencoded",
     r"^Content-Type must be application/json", None),
    ("text-content-type", "/completions", b'{"model": "tiny", "prompt": "x"}', "text/plain",
     r"^Content-Type must be application/json", None),
    ("bad-json", "/chat/completions", b'{"model": "tiny",\n "messages": }', "application/json",
     r"^invalid JSON body: Expecting value at line 2 column 14$", None),
    ("empty-body", "/chat/completions", b"", "application/json",
     r"^request body is empty; expected a JSON object$", None),
    ("no-content-type", "/completions", b'{"model": "tiny", "prompt": "x"}', None,
     r"^Content-Type must be application/json", None),
    ("array-body", "/completions", b"[1, 2]", "application/json", r"must be a JSON object, got an array", None),
    ("no-content", "/chat/completions", {"model": "tiny", "messages": [*USER, {"role": "user"}]}, "application/json",
     r"^messages\[1\]: a user message needs content", "messages[1].content"),
    ("assistant-empty", "/chat/completions", {"model": "tiny", "messages": [{"role": "assistant"}]},
     "application/json", r"^messages\[0\]: an assistant message needs content or tool_calls", "messages[0]"),
    ("tool-call-without-id", "/chat/completions",
     {"model": "tiny", "messages": [*USER, {"role": "assistant", "tool_calls": [_CALL_WITHOUT_ID]}]},
     "application/json", r"^messages\[1\]\.tool_calls\[0\]: a tool call needs an id", "messages[1].tool_calls[0].id"),
    ("stream-yes", "/chat/completions", {"model": "tiny", "messages": USER, "stream": "yes"}, "application/json",
     r"^stream: ", "stream"),
    ("completion-stream-1", "/completions", {"model": "tiny", "prompt": "x", "stream": 1}, "application/json",
     r"^stream: ", "stream"),
    ("stop-empty-string", "/chat/completions", {"model": "tiny", "messages": USER, "stop": ""}, "application/json",
     r"^stop: stop strings must not be empty", "stop"),
    ("stop-empty-in-list", "/completions", {"model": "tiny", "prompt": "x", "stop": [""]}, "application/json",
     r"^stop: stop strings must not be empty", "stop"),
]
UNSUPPORTED = [
    ("/chat/completions", "logprobs", True),
    ("/chat/completions", "top_logprobs", 3),
    ("/chat/completions", "n", 2),
    ("/chat/completions", "response_format", {"type": "json_object"}),
    ("/chat/completions", "response_format", {"type": "json_schema", "json_schema": {"name": "x"}}),
    ("/chat/completions", "tool_choice", "required"),
    ("/chat/completions", "tool_choice", {"type": "function", "function": {"name": "get_weather"}}),
    ("/completions", "echo", True),
    ("/completions", "logprobs", 2),
    ("/completions", "n", 3),
    ("/completions", "best_of", 2),
]


def _post(module: TrainableModule, path: str, body: Any, content_type: str | None = "application/json") -> Any:
    """POST *body* (bytes as they are, anything else as JSON) with this Content-Type (None: no header)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"content-type": content_type} if content_type else {}
    return httpx.post(module.url + path, content=raw, headers=headers, timeout=30)


@pytest.mark.parametrize(
    ("path", "body", "content_type", "message", "param"), [c[1:] for c in BAD_BODIES], ids=[c[0] for c in BAD_BODIES]
)
def test_bad_bodies_get_a_400_that_says_what_is_wrong(
    served_module: TrainableModule,  # noqa: F811
    path: str,
    body: Any,
    content_type: str | None,
    message: str,
    param: str | None,
) -> None:
    import re

    r = _post(served_module, path, body, content_type)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert re.search(message, error["message"]), error
    assert error["param"] == param and error["type"] == "invalid_request_error"


@pytest.mark.parametrize(("path", "option", "value"), UNSUPPORTED, ids=[f"{p}-{o}={v!r}" for p, o, v in UNSUPPORTED])
def test_options_this_server_cannot_honour_are_refused(
    served_module: TrainableModule,  # noqa: F811
    path: str,
    option: str,
    value: Any,
) -> None:
    base: dict[str, Any] = {"model": "tiny", "max_tokens": 2}
    base.update({"messages": USER} if path == "/chat/completions" else {"prompt": "x"})
    r = _post(served_module, path, {**base, option: value})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert "not supported by this server" in error["message"] and error["param"] == option


def test_accepted_option_values_still_work(served_module: TrainableModule) -> None:  # noqa: F811
    chat: dict[str, Any] = {"model": "tiny", "messages": USER, "max_tokens": 2}
    for extra in ({"n": 1}, {"logprobs": False}, {"response_format": {"type": "text"}}, {"tool_choice": "auto"},
                  {"stop": []}):
        assert _post(served_module, "/chat/completions", {**chat, **extra}).status_code == 200, extra
    text: dict[str, Any] = {"model": "tiny", "prompt": "x", "max_tokens": 2}
    for extra in ({"echo": False}, {"logprobs": None}, {"best_of": 1}):
        assert _post(served_module, "/completions", {**text, **extra}).status_code == 200, extra
    assert _post(served_module, "/completions", text, "application/json; charset=utf-8").status_code == 200


def test_tool_choice_none_offers_no_tools(served_module: TrainableModule) -> None:  # noqa: F811
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    body: dict[str, Any] = {"model": "tiny", "messages": USER, "max_tokens": 1}

    def prompt_tokens(extra: dict[str, Any]) -> int:
        r = _post(served_module, "/chat/completions", {**body, **extra})
        assert r.status_code == 200, r.text
        return int(r.json()["usage"]["prompt_tokens"])

    plain = prompt_tokens({})
    assert prompt_tokens({"tools": tools, "tool_choice": "auto"}) > plain
    assert prompt_tokens({"tools": tools, "tool_choice": "none"}) == plain
