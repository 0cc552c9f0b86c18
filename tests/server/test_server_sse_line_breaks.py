"""Threat: a model's answer holding U+2028, U+2029 or U+0085 cuts a streamed event in two.

SSE ends a line only at CR or LF, and JSON leaves those three characters raw, but
clients reading the stream with ``httpx``'s ``iter_lines`` (``httpx-sse``, and every
client built on it) split lines where ``str.splitlines`` does: a ``data:`` line
broke into two halves that are not JSON. The server now writes them as JSON
escapes, so every line a client reads is a whole event whichever line reader it uses.

The served module is a stub whose answer holds those characters (a random-weight model
cannot be made to emit them); the server, HTTP and the client are real.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from modules.base import Completion, StreamDelta
from modules.server.app import ServerThread, create_app

ANSWER = ["line\u2028separator ", "para\u2029graph ", "next\x85line ", "plain\nnewline"]


class _Breaking:
    """A servable module whose answer holds every character ``splitlines`` breaks at."""

    name = "breaking"

    def prepare(self, messages: Any, tools: Any = None, **generation: Any) -> Any:
        return None

    def prepare_text(self, prompt: str, **generation: Any) -> Any:
        return None

    def generate(self, request: Any, cancel: Any = None) -> Completion:
        return Completion(text="".join(ANSWER), tool_calls=(), finish_reason="stop", usage={})

    def generate_stream(self, request: Any, cancel: Any = None, usage: Any = None) -> Iterator[StreamDelta]:
        for piece in ANSWER:
            yield StreamDelta(text=piece)
        yield StreamDelta(text="", finish_reason="stop")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    server = ServerThread(create_app(_Breaking())).start()
    try:
        yield server.url + "/v1"
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
        ("/completions", {"prompt": "hi"}),
    ],
    ids=["chat", "text"],
)
def test_a_streamed_answer_with_unicode_line_separators_stays_one_event_per_line(
    url: str, path: str, body: dict[str, Any]
) -> None:
    text = ""
    with httpx.stream("POST", url + path, json={"model": "breaking", "stream": True, **body}, timeout=30) as reply:
        assert reply.status_code == 200
        lines = [line for line in reply.iter_lines() if line]  # httpx splits as str.splitlines does
    assert lines[-1] == "data: [DONE]", lines
    for line in lines[:-1]:
        assert line.startswith("data: "), lines
        choice = json.loads(line[len("data: ") :])["choices"][0]
        text += choice.get("text") or choice.get("delta", {}).get("content") or ""
    assert text == "".join(ANSWER)
