"""Threat: a server (or a proxy in front of it) answers well-formed JSON of the wrong shape.

Whatever JSON comes back, plain or streamed, the call ends in a correct answer or a typed
``ModuleError`` (a wrong shape is an ``APIResponseValidationError`` naming the path of the
wrong value) -- never an ``AttributeError``/``TypeError``/``KeyError``, and never a silently
empty answer.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from fault_server import FaultServer, Reply, Stream, completion
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules import OnlineChatModule
from modules.errors import APIResponseValidationError, ModuleError

KEY = "sk-test-0123456789abcdef"
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def m(server):
    with OnlineChatModule(base_url=server.base_url, model="m", api_key=KEY, max_retries=0) as module:
        yield module


def with_message(message: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


WRONG_PLAIN = [
    pytest.param(with_message("hi"), "choices[0].message", id="message-is-a-string"),
    pytest.param({"choices": []}, "choices", id="no-choices"),
    pytest.param({"choices": "x"}, "choices", id="choices-a-string"),
    pytest.param({"choices": [1]}, "choices[0]", id="choice-a-number"),
    pytest.param({"object": "chat.completion"}, "choices", id="choices-missing"),
    pytest.param(with_message({"content": 42}), "choices[0].message.content", id="content-a-number"),
    pytest.param(with_message({"content": [{"type": "text", "text": 1}]}), "content[0].text", id="content-part-text"),
    pytest.param(with_message({"content": None, "tool_calls": [1]}), "tool_calls[0]", id="tool-call-a-number"),
    pytest.param(with_message({"tool_calls": "x"}), "tool_calls", id="tool-calls-a-string"),
    pytest.param(with_message({"tool_calls": [{"id": "a"}]}), "tool_calls[0].function", id="no-function"),
    pytest.param(with_message({"tool_calls": [{"function": {}}]}), "function.name", id="no-name"),
    pytest.param(with_message({"tool_calls": [{"function": {"name": 3}}]}), "function.name", id="name-a-number"),
    pytest.param(
        with_message({"tool_calls": [{"function": {"name": "f", "arguments": 5}}]}), "arguments", id="arguments-5"
    ),
    pytest.param(
        with_message({"tool_calls": [{"function": {"name": "f", "arguments": [1]}}]}), "arguments", id="arguments-list"
    ),
    pytest.param(
        {"choices": [{"message": {"content": "x"}, "finish_reason": 7}]}, "finish_reason", id="finish-a-number"
    ),
    pytest.param([completion("ok")], "top level", id="top-level-list"),
    pytest.param(None, "top level", id="null"),
    pytest.param("ok", "top level", id="a-string"),
]


@pytest.mark.parametrize(("body", "path"), WRONG_PLAIN)
def test_a_wrong_shape_answer_is_a_validation_error_naming_the_path(server, m, body, path):
    server.script.append(Reply(body=json.dumps(body), headers={"Content-Type": "application/json"}))
    with pytest.raises(APIResponseValidationError, match="wrong shape") as info:
        m("hi")
    assert path in str(info.value)


def events(*chunks: Any) -> list[bytes]:
    return [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks] + [b"data: [DONE]\n\n"]


def delta(d: Any, **choice: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": d, **choice}]}


WRONG_STREAM = [
    pytest.param(delta("x"), "choices[0].delta", id="delta-a-string"),
    pytest.param(delta({"content": 5}), "delta.content", id="content-a-number"),
    pytest.param({"choices": "x"}, "choices", id="choices-a-string"),
    pytest.param({"choices": [1]}, "choices[0]", id="choice-a-number"),
    pytest.param({"choices": [{"index": "0", "delta": {}}]}, "index", id="index-a-string"),
    pytest.param(delta({"tool_calls": [1]}), "tool_calls[0]", id="tool-call-a-number"),
    pytest.param(delta({"tool_calls": "x"}), "tool_calls", id="tool-calls-a-string"),
    pytest.param(delta({"tool_calls": [{"index": 0, "function": "f"}]}), "function", id="function-a-string"),
    pytest.param(delta({"tool_calls": [{"index": 0, "function": {"name": 1}}]}), "name", id="name-a-number"),
    pytest.param(
        delta({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": 5}}]}), "arguments", id="args-5"
    ),
    pytest.param(delta({"tool_calls": [{"index": 0, "id": "c"}]}, finish_reason="tool_calls"), "name", id="no-name"),
    pytest.param(delta({"content": "a"}, finish_reason=3), "finish_reason", id="finish-a-number"),
    pytest.param([1, 2], "top level", id="top-level-list"),
    pytest.param(None, "top level", id="null"),
]


@pytest.mark.parametrize(("chunk", "path"), WRONG_STREAM)
def test_a_wrong_shape_stream_event_is_a_validation_error_naming_the_path(server, m, chunk, path):
    server.script.append(Stream(events(delta({"content": "a"}), chunk)))
    with pytest.raises(APIResponseValidationError, match="wrong shape") as info:
        list(m.stream("hi"))
    assert path in str(info.value)


def test_content_parts_and_object_arguments_are_still_read(server, m):
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}
    parts = [{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "output_text", "text": "b"}]
    body = with_message({"content": parts, "tool_calls": [call]})
    server.script.append(Reply(body=body))
    answer = m("hi")
    assert answer["content"] == "ab" and answer["tool_calls"][0]["function"]["arguments"] == '{"x": 1}'


# -- properties: any JSON, any mutation of a valid answer ----------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, valid: Any) -> Any:
    """``valid`` with one value anywhere replaced by any JSON, or one key/item removed."""
    value = copy.deepcopy(valid)
    path = draw(st.sampled_from(paths(value)))
    if not path:
        return draw(JSON)
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    if draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(JSON)
    return value


def content_of(body: Any) -> Any:
    try:
        return body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None


VALID = completion("ok", tool_calls=[CALL])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(mutated(VALID), mutated(completion("plain")), JSON))
def test_any_json_answer_gives_an_answer_or_a_module_error(server, m, body):
    server.script.append(Reply(body=json.dumps(body), headers={"Content-Type": "application/json"}))
    try:
        answer = m("hi")
    except ModuleError:
        return
    text = answer if isinstance(answer, str) else answer["content"]
    content = content_of(body)
    if isinstance(content, str):
        assert text == (content or None if not isinstance(answer, str) else content)


STREAM = [
    delta({"role": "assistant", "content": ""}),
    delta({"content": "Hel"}),
    delta({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}]}),
    delta({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]}),
    delta({"content": "lo"}, finish_reason="tool_calls"),
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_json_stream_event_gives_an_answer_or_a_module_error(server, m, data):
    chunks = copy.deepcopy(STREAM)
    i = data.draw(st.integers(0, len(chunks) - 1))
    chunks[i] = data.draw(st.one_of(mutated(chunks[i]), JSON))
    server.script.append(Stream(events(*chunks)))
    try:
        s = m.stream("hi")
        text = "".join(s)
    except ModuleError:
        return
    assert isinstance(text, str) and all(isinstance(c["function"]["arguments"], str) for c in s.tool_calls)


DEEP = "[" * 50_000 + "]" * 50_000
DEEP_INSIDE = '{"choices": [{"message": {"content": ' + DEEP + "}}]}"


@pytest.mark.parametrize("body", [DEEP, DEEP_INSIDE, '{"choices": ' + DEEP + "}"], ids=["top", "content", "choices"])
def test_json_nested_past_the_recursion_limit_is_a_typed_error(server, m, body):
    server.script.append(Reply(body=body, headers={"Content-Type": "application/json"}))
    with pytest.raises(APIResponseValidationError):
        m("hi")


@pytest.mark.parametrize("data", [DEEP, '{"choices": [{"index": 0, "delta": ' + DEEP + "}]}"], ids=["top", "delta"])
def test_a_stream_event_nested_past_the_recursion_limit_is_a_typed_error(server, m, data):
    server.script.append(Stream([f"data: {data}\n\n".encode(), b"data: [DONE]\n\n"]))
    with pytest.raises(APIResponseValidationError):
        list(m.stream("hi"))


def test_an_error_body_nested_past_the_recursion_limit_is_still_a_status_error(server, m):
    from modules.errors import BadRequestError

    server.script.append(Reply(400, body=DEEP, headers={"Content-Type": "application/json"}))
    with pytest.raises(BadRequestError):
        m("hi")
