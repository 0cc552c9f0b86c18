"""Tool calls streamed over several deltas reach the client as separate calls, as the plain answer has them.

A module may stream each tool call as soon as it is complete (``StreamDelta``
carries completed calls; :class:`~modules.base.ChatStream` extends its list with
each delta's). The server numbered the calls of each delta from 0, so a second
call arrived with the first one's ``index`` and OpenAI's client merged the two
into one call (``id`` ``"call_acall_b"``, name ``"fg"``). The module is scripted:
the tiny model's random weights never call tools.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from modules.base import Completion, StreamDelta
from modules.server.app import ServerThread, create_app

CALL_A = {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
CALL_B = {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
CALL_C = {"id": "call_c", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}
USAGE = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}


class _OneCallPerDelta:
    """A servable module whose answer is text, then three tool calls, each in a delta of its own."""

    name = "scripted"

    def prepare(self, messages: Any, tools: Any = None, **generation: Any) -> Any:
        return messages

    def prepare_text(self, prompt: str, **generation: Any) -> Any:
        return prompt

    def generate(self, request: Any, cancel: Any = None) -> Completion:
        return Completion(text="Checking.", tool_calls=(CALL_A, CALL_B, CALL_C), finish_reason="tool_calls", usage=USAGE)

    def generate_stream(self, request: Any, cancel: Any = None, usage: Any = None) -> Iterator[StreamDelta]:
        if usage is not None:
            usage.update(USAGE)
        yield StreamDelta(text="Checking.")
        yield StreamDelta(tool_calls=(CALL_A,))
        yield StreamDelta(tool_calls=(CALL_B, CALL_C), finish_reason="tool_calls")


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    server = ServerThread(create_app(_OneCallPerDelta())).start()
    try:
        yield openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=60)
    finally:
        server.stop()


USER: Any = [{"role": "user", "content": "Weather in Paris and Rome, and the time?"}]


def test_each_streamed_tool_call_has_its_own_index(client: openai.OpenAI) -> None:
    chunks = list(client.chat.completions.create(model="scripted", messages=USER, stream=True))
    sent = [(c.index, c.id) for chunk in chunks for choice in chunk.choices for c in choice.delta.tool_calls or ()]
    assert sent == [(0, "call_a"), (1, "call_b"), (2, "call_c")]


def test_the_streamed_answer_equals_the_plain_one(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="scripted", messages=USER)
    with client.chat.completions.stream(model="scripted", messages=USER, stream_options={"include_usage": True}) as s:
        streamed = s.get_final_completion()

    def calls(message: Any) -> list[tuple[str, str, str]]:
        return [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls]

    assert calls(streamed.choices[0].message) == calls(plain.choices[0].message) == [
        ("call_a", "get_weather", '{"city": "Paris"}'),
        ("call_b", "get_time", "{}"),
        ("call_c", "get_weather", '{"city": "Rome"}'),
    ]
    assert streamed.choices[0].message.content == plain.choices[0].message.content == "Checking."
    assert streamed.choices[0].finish_reason == plain.choices[0].finish_reason == "tool_calls"
    assert streamed.usage is not None and plain.usage is not None
    assert streamed.usage.model_dump() == plain.usage.model_dump()
