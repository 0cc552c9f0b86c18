"""A module with exactly :class:`~modules.server.app.ServableModule`'s methods streams chat answers.

The protocol asks for ``generate_stream(request, cancel=None)``; the server called
it with a third argument (the dict for the token counts) on every chat stream, and
on a text stream asking for usage, so such a module failed each of them with a
``TypeError`` reported to the client as its own mistake. Now the counts go only
to a module whose method takes them; one without streams its answer, and its
usage chunk carries no counts (as its plain answer's ``usage`` has none).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from modules.base import Completion, StreamDelta
from modules.server.app import ServerThread, create_app


class _ProtocolOnly:
    """Exactly the methods and signatures of ``ServableModule``."""

    name = "protocol"

    def prepare(self, messages: Any, tools: Any = None, **generation: Any) -> Any:
        return messages

    def prepare_text(self, prompt: str, **generation: Any) -> Any:
        return prompt

    def generate(self, request: Any, cancel: threading.Event | None = None) -> Completion:
        return Completion(text="Hello there.", finish_reason="stop")

    def generate_stream(self, request: Any, cancel: threading.Event | None = None) -> Iterator[StreamDelta]:
        yield StreamDelta(text="Hello")
        yield StreamDelta(text=" there.", finish_reason="stop")


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    server = ServerThread(create_app(_ProtocolOnly())).start()
    try:
        yield openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=60)
    finally:
        server.stop()


USER: Any = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("usage", [False, True], ids=["no-usage", "include-usage"])
def test_a_chat_stream_of_a_protocol_module_is_its_answer(client: openai.OpenAI, usage: bool) -> None:
    options: Any = {"stream_options": {"include_usage": True}} if usage else {}
    chunks = list(client.chat.completions.create(model="protocol", messages=USER, stream=True, **options))
    text = "".join(c.delta.content or "" for chunk in chunks for c in chunk.choices)
    finish = [c.finish_reason for chunk in chunks for c in chunk.choices if c.finish_reason]
    plain = client.chat.completions.create(model="protocol", messages=USER)
    assert (text, finish) == (plain.choices[0].message.content, [plain.choices[0].finish_reason])
    assert (chunks[-1].choices == []) == usage


@pytest.mark.parametrize("usage", [False, True], ids=["no-usage", "include-usage"])
def test_a_text_stream_of_a_protocol_module_is_its_answer(client: openai.OpenAI, usage: bool) -> None:
    options: Any = {"stream_options": {"include_usage": True}} if usage else {}
    chunks = list(client.completions.create(model="protocol", prompt="hi", stream=True, **options))
    text = "".join(c.text for chunk in chunks for c in chunk.choices)
    assert text == client.completions.create(model="protocol", prompt="hi").choices[0].text == "Hello there."
    assert (chunks[-1].choices == []) == usage
