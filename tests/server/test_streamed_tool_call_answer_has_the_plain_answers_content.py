"""A streamed chat answer joins, in OpenAI's own client, to the plain answer's message, content included.

The server opened every stream with ``delta: {"role": "assistant", "content": ""}`` before it knew the
answer: an answer of tool calls alone then joined to content ``""`` streamed but ``None`` plain. OpenAI
opens a text answer with content ``""`` and an answer that starts with a tool call with ``null``; the
server now sends the role chunk with the first delta, saying which. The module is scripted (the tiny
model's random weights never call tools); each answer shape is streamed in the deltas given.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState

from modules.base import Completion, StreamDelta
from modules.server.app import ServerThread, create_app

CALL_A = {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
CALL_B = {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}

ANSWERS: dict[str, list[StreamDelta]] = {
    "tool call alone": [StreamDelta(tool_calls=(CALL_A,), finish_reason="tool_calls")],
    "tool calls over two deltas": [
        StreamDelta(tool_calls=(CALL_A,)),
        StreamDelta(tool_calls=(CALL_B,), finish_reason="tool_calls"),
    ],
    "empty delta then a call": [StreamDelta(), StreamDelta(tool_calls=(CALL_A,), finish_reason="tool_calls")],
    "text then a call": [StreamDelta(text="Checking."), StreamDelta(tool_calls=(CALL_A,), finish_reason="tool_calls")],
    "a call then text": [StreamDelta(tool_calls=(CALL_A,)), StreamDelta(text="Done.", finish_reason="tool_calls")],
    "text alone": [StreamDelta(text="Hello"), StreamDelta(text=" there", finish_reason="stop")],
    "empty answer": [StreamDelta(finish_reason="stop")],
}


def _plain(deltas: list[StreamDelta]) -> Completion:
    """The answer the deltas stream, as the module's plain ``generate`` gives it."""
    text = "".join(d.text for d in deltas)
    calls = tuple(c for d in deltas for c in d.tool_calls or ())
    return Completion(text=text, tool_calls=calls, finish_reason=deltas[-1].finish_reason or "stop", usage={})


class _Scripted:
    """A servable module answering the script named by the user's message."""

    name = "scripted"

    def prepare(self, messages: Any, tools: Any = None, **generation: Any) -> Any:
        said = messages[-1]["content"]
        if said in ANSWERS:
            return ANSWERS[said]
        return [StreamDelta(text=t, tool_calls=tuple(c), finish_reason=f) for t, c, f in json.loads(said)]

    def prepare_text(self, prompt: str, **generation: Any) -> Any:
        return ANSWERS[prompt]

    def generate(self, request: Any, cancel: Any = None) -> Completion:
        return _plain(request)

    def generate_stream(self, request: Any, cancel: Any = None) -> Iterator[StreamDelta]:
        yield from request


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    server = ServerThread(create_app(_Scripted())).start()
    try:
        yield openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=60)
    finally:
        server.stop()


@pytest.mark.parametrize("answer", list(ANSWERS), ids=list(ANSWERS))
def test_the_streamed_message_joins_to_the_plain_one(client: openai.OpenAI, answer: str) -> None:
    messages: Any = [{"role": "user", "content": answer}]
    plain = client.chat.completions.create(model="scripted", messages=messages).choices[0].message
    with client.chat.completions.stream(model="scripted", messages=messages) as stream:
        streamed = stream.get_final_completion().choices[0].message

    def calls(message: Any) -> list[tuple[str, str, str]]:
        return [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ()]

    assert streamed.role == plain.role == "assistant"
    assert streamed.content == plain.content
    assert calls(streamed) == calls(plain)


def test_a_tool_call_answer_opens_with_null_content_as_openai_streams_it(client: openai.OpenAI) -> None:
    messages: Any = [{"role": "user", "content": "tool call alone"}]
    chunks = list(client.chat.completions.create(model="scripted", messages=messages, stream=True))
    first = chunks[0].choices[0].delta
    assert first.role == "assistant" and first.content is None
    assert "content" in first.model_fields_set  # sent as null, as OpenAI sends it, not left out
    assert client.chat.completions.create(model="scripted", messages=messages).choices[0].message.content is None


def test_a_text_answer_opens_with_empty_content_as_openai_streams_it(client: openai.OpenAI) -> None:
    messages: Any = [{"role": "user", "content": "text alone"}]
    chunks = list(client.chat.completions.create(model="scripted", messages=messages, stream=True))
    first = chunks[0].choices[0].delta
    assert first.role == "assistant" and first.content == ""
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello there"


_CALL = st.builds(
    lambda i, name, args: {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}},
    st.integers(0, 99),
    st.sampled_from(["f", "get_weather"]),
    st.sampled_from(["{}", '{"x": 1}', ""]),
)
_DELTA = st.tuples(st.sampled_from(["", "", "a", " ", "\u00e9t\u00e9", "\n"]), st.lists(_CALL, max_size=2), st.none())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    deltas=st.lists(_DELTA, min_size=0, max_size=4),
    finish=st.sampled_from(["stop", "length", "tool_calls"]),
)
def test_any_answer_streamed_joins_to_the_plain_one(client: openai.OpenAI, deltas: list[Any], finish: str) -> None:
    script = [*deltas, ("", [], finish)]
    messages: Any = [{"role": "user", "content": json.dumps(script)}]
    plain = client.chat.completions.create(model="scripted", messages=messages).choices[0].message
    joined = ChatCompletionStreamState()  # the official client's joining, without its parse (which refuses "length")
    for chunk in client.chat.completions.create(model="scripted", messages=messages, stream=True):
        joined.handle_chunk(chunk)
    streamed = joined.current_completion_snapshot.choices[0].message
    assert streamed.content == plain.content

    def calls(message: Any) -> list[tuple[str, str, str]]:
        return [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ()]

    assert calls(streamed) == calls(plain)
