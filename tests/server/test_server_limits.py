"""Hostile and malformed requests over real HTTP: a 4xx in OpenAI's envelope, never a 5xx.

Each row is one threat: nesting that overflows a recursive walk, requests that
hold the model (huge or many stop strings), options the server would silently
ignore, values of the wrong JSON type, and HTTP a well-behaved client never
sends. The limits they hit are documented in ``modules/server/limits.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.trainable import TrainableModule
from modules.server.limits import (
    MAX_MESSAGES,
    MAX_NESTING,
    MAX_STOP_CHARS,
    MAX_STOP_STRINGS,
    MAX_TOOLS,
)

USER = [{"role": "user", "content": "hi"}]
CHAT = "/chat/completions"
TEXT = "/completions"


@pytest.fixture(scope="module")
def server(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    """A served tiny model with short answers and a small context (cheap generations)."""
    module = TrainableModule(tiny_model_path, name="tiny", max_new_tokens=2, max_context=512).start(serve=True)
    yield module
    module.stop()


def _post(module: TrainableModule, path: str, body: Any, content_type: str | None = "application/json") -> Any:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"content-type": content_type} if content_type else {}
    return httpx.post(module.url + path, content=raw, headers=headers, timeout=60)


def _envelope(response: Any) -> dict[str, Any]:
    """The error object of a 4xx answer, checked to be OpenAI's envelope."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}, body
    assert body["error"]["message"] and "Traceback" not in body["error"]["message"]
    return dict(body["error"])


def _nested(depth: int, leaf: Any = "x") -> Any:
    value = leaf
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


def _deep_schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


# -- nesting: a recursive walk over client JSON must never overflow ------------------------------------

DEEP = 600


def _tool(parameters: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "f", "parameters": parameters}}


def _call(arguments: Any) -> dict[str, Any]:
    return {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}


NESTING = [
    pytest.param({"messages": USER, "tools": [_tool(_deep_schema(DEEP // 2))]}, id="tool-parameters"),
    pytest.param({"messages": [{**USER[0], "metadata": _nested(DEEP)}]}, id="extra-message-field"),
    pytest.param(
        {"messages": [*USER, {"role": "assistant", "tool_calls": [_call(_nested(DEEP, {}))]}]},
        id="tool-call-arguments-object",
    ),
    pytest.param(
        {"messages": [*USER, {"role": "assistant", "tool_calls": [_call(json.dumps(_nested(DEEP, {})))]}]},
        id="tool-call-arguments-json-string",
    ),
    pytest.param({"messages": USER, "tools": [{**_tool({"type": "object"}), "x": _nested(DEEP)}]}, id="tool-extra-key"),
    pytest.param({"messages": USER, "tool_choice": _nested(DEEP)}, id="tool-choice"),
    pytest.param({"messages": USER, "user": "NESTED"}, id="5000-levels-anywhere"),
]


@pytest.mark.parametrize("extra", NESTING)
def test_deep_nesting_is_a_400_never_a_recursion_error_500(server: TrainableModule, extra: dict[str, Any]) -> None:
    for stream in (False, True):
        raw = json.dumps({"model": "tiny", "max_tokens": 1, "stream": stream, **extra}).encode()
        raw = raw.replace(b'"NESTED"', b"[" * 5000 + b"]" * 5000)  # deeper than json.dumps itself can go
        r = _post(server, CHAT, raw)
        error = _envelope(r)
        assert r.status_code == 400 and error["type"] == "invalid_request_error"
        assert f"{MAX_NESTING}" in error["message"], error


def test_nesting_at_the_limit_is_served_and_one_level_more_is_not(server: TrainableModule) -> None:
    # Levels: the body (1), messages (2), the message (3), then the metadata value's own containers.
    def ask(levels: int) -> Any:
        message = {**USER[0], "metadata": _nested(levels - 3)}
        return _post(server, CHAT, {"model": "tiny", "max_tokens": 1, "messages": [message]})

    assert ask(MAX_NESTING).status_code == 200, ask(MAX_NESTING).text[:300]
    assert "nested more than" in _envelope(ask(MAX_NESTING + 1))["message"]


# -- requests that would hold the model: over the documented limits, a 400 naming the limit ------------

EXPENSIVE = [
    pytest.param(CHAT, {"stop": ["z" * 100_000]}, "stop", id="one-100k-char-stop"),
    pytest.param(CHAT, {"stop": [f"s{i}" for i in range(10_000)]}, "stop", id="10000-stops"),
    pytest.param(CHAT, {"stop": "z" * (MAX_STOP_CHARS + 1)}, "stop", id="stop-str-over-length"),
    pytest.param(CHAT, {"stop": ["a"] * (MAX_STOP_STRINGS + 1)}, "stop", id="stops-over-count"),
    pytest.param(TEXT, {"stop": ["z" * 100_000]}, "stop", id="completions-100k-char-stop"),
    pytest.param(CHAT, {"messages": USER * (MAX_MESSAGES + 1)}, "messages", id="messages-over-count"),
    pytest.param(CHAT, {"tools": [_tool({"type": "object"})] * (MAX_TOOLS + 1)}, "tools", id="tools-over-count"),
    pytest.param(CHAT, {"max_tokens": 10**30}, "max_tokens", id="max-tokens-astronomical"),
    pytest.param(CHAT, {"max_completion_tokens": 10**30}, "max_completion_tokens", id="max-completion-astronomical"),
    pytest.param(CHAT, {"n": 10**6}, "n", id="n-a-million"),
    pytest.param(TEXT, {"prompt": ["a", "b"]}, "prompt", id="two-prompts"),
]


@pytest.mark.parametrize(("path", "extra", "param"), EXPENSIVE)
def test_expensive_requests_over_the_limits_are_refused(
    server: TrainableModule, path: str, extra: dict[str, Any], param: str
) -> None:
    base: dict[str, Any] = {"model": "tiny", "max_tokens": 1}
    base.update({"messages": USER} if path == CHAT else {"prompt": "x"})
    r = _post(server, path, {**base, **extra})
    error = _envelope(r)
    assert r.status_code == 400 and error["param"] == param, error


def test_stop_strings_at_the_limits_are_served(server: TrainableModule) -> None:
    stops = [chr(0x4E00 + i) * MAX_STOP_CHARS for i in range(MAX_STOP_STRINGS)]
    for path, base in ((CHAT, {"messages": USER}), (TEXT, {"prompt": "x"})):
        for stream in (False, True):
            r = _post(server, path, {"model": "tiny", "max_tokens": 4, "stop": stops, "stream": stream, **base})
            assert r.status_code == 200, r.text[:300]


# -- options the server cannot honour: refused by name, never silently ignored --------------------------

UNHONOURED = [
    (CHAT, "logit_bias", {"15": 100}),
    (CHAT, "presence_penalty", 1.5),
    (CHAT, "frequency_penalty", -1),
    (CHAT, "chat_template_kwargs", {"enable_thinking": True}),
    (CHAT, "parallel_tool_calls", False),
    (CHAT, "audio", {"voice": "alloy"}),
    (CHAT, "modalities", ["text", "audio"]),
    (CHAT, "prediction", {"type": "content", "content": "x"}),
    (CHAT, "reasoning_effort", "high"),
    (CHAT, "web_search_options", {}),
    (CHAT, "functions", [{"name": "f"}]),
    (CHAT, "function_call", "auto"),
    (CHAT, "some_future_option", 1),
    (TEXT, "logit_bias", {"15": 100}),
    (TEXT, "presence_penalty", 0.5),
    (TEXT, "some_future_option", "x"),
]


@pytest.mark.parametrize(("path", "option", "value"), UNHONOURED, ids=[f"{p}-{o}" for p, o, _ in UNHONOURED])
def test_options_the_server_would_ignore_are_refused_by_name(
    server: TrainableModule, path: str, option: str, value: Any
) -> None:
    base: dict[str, Any] = {"model": "tiny", "max_tokens": 1}
    base.update({"messages": USER} if path == CHAT else {"prompt": "x"})
    r = _post(server, path, {**base, option: value})
    error = _envelope(r)
    assert r.status_code == 400 and error["param"] == option, error
    assert option in error["message"] and "not supported by this server" in error["message"], error


def test_neutral_values_of_those_options_are_served(server: TrainableModule) -> None:
    chat: dict[str, Any] = {"model": "tiny", "messages": USER, "max_tokens": 1}
    for extra in (
        {"presence_penalty": 0},
        {"frequency_penalty": 0.0},
        {"logit_bias": {}},
        {"parallel_tool_calls": True},
        {"user": "someone"},
        {"metadata": {"k": "v"}},
        {"store": False},
    ):
        assert _post(server, CHAT, {**chat, **extra}).status_code == 200, extra


# -- strict types: a value of the wrong JSON type is a 400, never coerced --------------------------------

WRONG_TYPES = [
    ("max_tokens", True),
    ("max_tokens", 2.0),
    ("max_tokens", "2"),
    ("max_completion_tokens", True),
    ("temperature", "1"),
    ("temperature", True),
    ("top_p", "0.5"),
    ("seed", 1.5),
    ("seed", "7"),
    ("seed", False),
    ("n", True),
    ("stream", 1),
    ("stream", "true"),
    ("stop", 5),
    ("stop", [1]),
    ("model", 5),
    ("messages", {"role": "user", "content": "hi"}),
]


@pytest.mark.parametrize(("option", "value"), WRONG_TYPES, ids=[f"{o}={v!r}" for o, v in WRONG_TYPES])
def test_values_of_the_wrong_type_are_refused_not_coerced(server: TrainableModule, option: str, value: Any) -> None:
    r = _post(server, CHAT, {"model": "tiny", "messages": USER, "max_tokens": 1, option: value})
    error = _envelope(r)
    assert r.status_code == 400 and error["param"] is not None and error["param"].split(".")[0] == option, error


MESSAGE_WRONG_TYPES = [
    {"role": "user", "content": 42},
    {"role": "user", "content": "hi", "name": 7},
    {"role": "tool", "content": "x", "tool_call_id": 3},
    {"role": "assistant", "tool_calls": [{"id": 1, "type": "function", "function": {"name": "f"}}]},
    {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": 5}}]},
    {"role": "user", "content": [{"type": "text", "text": 5}]},
]


@pytest.mark.parametrize("message", MESSAGE_WRONG_TYPES, ids=lambda m: json.dumps(m)[:60])
def test_message_fields_of_the_wrong_type_are_refused(server: TrainableModule, message: dict[str, Any]) -> None:
    r = _post(server, CHAT, {"model": "tiny", "messages": [*USER, message], "max_tokens": 1})
    error = _envelope(r)
    assert r.status_code == 400 and str(error["param"]).startswith("messages.1"), error


# -- malformed HTTP: the envelope wherever the server is the one answering --------------------------------

_VALID = b'{"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1'
MALFORMED = [
    pytest.param("POST", CHAT, _VALID + b', "user": "\xff\xfe"}', "application/json", 400, id="invalid-utf8"),
    pytest.param("POST", CHAT, _VALID + b', "user": NaN}', "application/json", 400, id="nan-literal"),
    pytest.param(
        "POST", CHAT, _VALID + b', "metadata": {"x": -Infinity}}', "application/json", 400, id="infinity-literal"
    ),
    pytest.param(
        "POST", CHAT, _VALID + b', "seed": ' + b"9" * 5000 + b"}", "application/json", 400, id="5000-digit-int"
    ),
    pytest.param(
        "POST", CHAT, _VALID + b', "metadata": {"x": 1e999999}}', "application/json", 400, id="float-overflow"
    ),
    pytest.param("POST", CHAT, _VALID + b', "model": "other"}', "application/json", 400, id="duplicate-key"),
    pytest.param("POST", CHAT, b"", "application/json", 400, id="empty"),
    pytest.param("POST", CHAT, b"null", "application/json", 400, id="null-body"),
    pytest.param("POST", CHAT, _VALID + b"} trailing", "application/json", 400, id="trailing-garbage"),
    pytest.param("POST", CHAT, _VALID + b"}", "text/plain", 400, id="wrong-content-type"),
    pytest.param("POST", CHAT, _VALID + b"}", "application/json; charset=latin-1", 400, id="non-utf8-charset"),
    pytest.param("POST", "/embeddings", _VALID + b"}", "application/json", 404, id="unknown-route"),
    pytest.param("GET", "/../../etc/passwd", None, None, 404, id="path-traversal"),
    pytest.param("DELETE", "/models", None, None, 405, id="wrong-method"),
    pytest.param("PUT", CHAT, _VALID + b"}", "application/json", 405, id="put-on-chat"),
    pytest.param("POST", "/models", _VALID + b"}", "application/json", 405, id="post-on-models"),
]


@pytest.mark.parametrize(("method", "path", "raw", "content_type", "status"), MALFORMED)
def test_malformed_http_gets_the_openai_envelope(
    server: TrainableModule, method: str, path: str, raw: bytes | None, content_type: str | None, status: int
) -> None:
    headers = {"content-type": content_type} if content_type else {}
    r = httpx.request(method, server.url + path, content=raw, headers=headers, timeout=30)
    assert r.status_code == status, r.text[:300]
    _envelope(r)


def test_a_body_over_the_limit_is_413_in_the_envelope_even_when_chunked(server: TrainableModule) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"model": "tiny", "messages": [{"role": "user", "content": "'
        yield from (b"a" * 65536 for _ in range(40))
        yield b'"}]}'

    r = httpx.post(server.url + CHAT, content=chunks(), headers={"content-type": "application/json"}, timeout=30)
    assert r.status_code == 413 and _envelope(r)["code"] == "request_too_large"
