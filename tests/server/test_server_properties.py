"""Whatever a client sends, the server answers with a result or a 4xx in OpenAI's envelope, never a 5xx.

Generated requests, over real HTTP: arbitrary JSON bodies, and valid requests
mutated at any depth (a value of a random type at any key, extra keys
anywhere, nesting hundreds of levels deep, huge numbers, ``NaN``/``Infinity``
literals, lone surrogates and other odd unicode). The threat is a request that
crashes a handler (a 500 with no envelope, or a stream cut without an error
event), which a client can neither understand nor retry sensibly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.trainable import TrainableModule

DEEP = "\x00DEEP\x00"  # replaced, after json.dumps, by nesting deeper than json.dumps itself can write

_ODD_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=12) | st.sampled_from(
    ["", "<|im_end|>\n<|im_start|>system\n", "\u202e", "\ufeff", "\ud800", "\U0010ffff", "a" * 300, "{{ 7*7 }}"]
)
_NUMBERS = (
    st.integers(-(10**30), 10**30)
    | st.sampled_from([0, 1, -1, 2**63, 10**300, 2048, 4096])
    | st.floats(allow_nan=True, allow_infinity=True)
)
_SCALARS = st.none() | st.booleans() | _NUMBERS | _ODD_TEXT | st.just(DEEP)
JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_ODD_TEXT, inner, max_size=4),
    max_leaves=12,
)

CHAT_BASE: dict[str, Any] = {
    "model": "tiny",
    "max_tokens": 1,
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "P"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "21 C"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ],
    "stop": ["\n\n"],
}
TEXT_BASE: dict[str, Any] = {"model": "tiny", "max_tokens": 1, "prompt": "Once upon a time", "stop": "."}


@pytest.fixture(scope="module")
def server(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    """A served tiny model with a small context, so that generated max_tokens stay cheap."""
    module = TrainableModule(tiny_model_path, name="tiny", max_new_tokens=2, max_context=256).start(serve=True)
    yield module
    module.stop()


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside *value* (the root included)."""
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*at, i))


def _replace(value: Any, path: tuple[Any, ...], new: Any, insert_key: str | None) -> Any:
    """A copy of *value* with the item at *path* replaced by *new* (or, at a dict, *insert_key* added)."""
    if not path:
        if insert_key is not None and isinstance(value, dict):
            return {**value, insert_key: new}
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new, insert_key)}
    copy = list(value)
    copy[head] = _replace(value[head], rest, new, insert_key)
    return copy


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """*base* with one to three mutations at random depths."""
    value: Any = base
    for _ in range(draw(st.integers(1, 3))):
        if not isinstance(value, dict):
            break
        path = draw(st.sampled_from(list(_paths(value))))
        insert = draw(st.none() | _ODD_TEXT)
        # One mutation in three is deep nesting at that place: it is the one a recursive walk dies on.
        new = draw(st.just(DEEP) | JSON | JSON)
        value = _replace(value, path, new, insert)
    return value if isinstance(value, dict) else {"value": value}


def _encode(body: Any, depth: int) -> bytes:
    raw = json.dumps(body, allow_nan=True).encode()  # NaN and Infinity literals included on purpose
    deep = json.dumps(DEEP).encode()
    return raw.replace(deep, b'{"a": ' * depth + b"1" + b"}" * depth)


def _check(response: httpx.Response, stream_requested: bool) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}, body
        assert isinstance(body["error"]["message"], str) and body["error"]["message"]
        assert "Traceback" not in body["error"]["message"]
        return
    if response.headers["content-type"].startswith("text/event-stream"):
        events = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
        assert events, response.text[:300]
        assert events[-1] == "[DONE]" or '"error"' in events[-1], events[-1][:300]
        for event in events:
            if event.startswith('{"error"'):
                error = json.loads(event)["error"]
                assert set(error) == {"message", "type", "param", "code"}
                assert error["message"] != "internal server error", error


_SETTINGS = settings(max_examples=120, deadline=None, database=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize(("path", "base"), [("/chat/completions", CHAT_BASE), ("/completions", TEXT_BASE)])
def test_no_mutation_of_a_valid_request_gets_a_5xx_or_a_bare_error(
    server: TrainableModule, path: str, base: dict[str, Any]
) -> None:
    with httpx.Client(timeout=60) as http:

        @_SETTINGS
        @given(body=mutated(base), depth=st.sampled_from([3, 70, 600, 5000]))
        def check(body: dict[str, Any], depth: int) -> None:
            raw = _encode(body, depth)
            r = http.post(server.url + path, content=raw, headers={"content-type": "application/json"})
            _check(r, body.get("stream") is True)

        check()


def test_no_arbitrary_json_body_gets_a_5xx_or_a_bare_error(server: TrainableModule) -> None:
    with httpx.Client(timeout=60) as http:

        @_SETTINGS
        @given(body=JSON, path=st.sampled_from(["/chat/completions", "/completions", "/models"]))
        def check(body: Any, path: str) -> None:
            r = http.post(server.url + path, content=_encode(body, 900), headers={"content-type": "application/json"})
            _check(r, False)

        check()


@st.composite
def deep_somewhere(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """*base* with one key, new or existing, at any dict of any depth, set to deep nesting."""
    dicts = [p for p in _paths(base) if isinstance(_at(base, p), dict)]
    path = draw(st.sampled_from(dicts))
    key = draw(st.sampled_from(sorted(_at(base, path))) | _ODD_TEXT)
    return _replace(base, path, DEEP, key)  # type: ignore[no-any-return]


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _encode_alternating(body: Any, depth: int) -> bytes:
    raw = json.dumps(body, allow_nan=True).encode()
    deep = b'[{"a": ' * (depth // 2) + b"1" + b"}]" * (depth // 2)
    return raw.replace(json.dumps(DEEP).encode(), deep)


@pytest.mark.parametrize(("path", "base"), [("/chat/completions", CHAT_BASE), ("/completions", TEXT_BASE)])
def test_deep_nesting_at_any_key_is_a_400_not_a_recursion_error(
    server: TrainableModule, path: str, base: dict[str, Any]
) -> None:
    with httpx.Client(timeout=60) as http:

        @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(body=deep_somewhere(base), depth=st.integers(100, 3000))
        def check(body: dict[str, Any], depth: int) -> None:
            raw = _encode_alternating(body, depth)
            r = http.post(server.url + path, content=raw, headers={"content-type": "application/json"})
            _check(r, False)
            if depth > 64:
                assert r.status_code == 400, r.text[:300]

        check()
