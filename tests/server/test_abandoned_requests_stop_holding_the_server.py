"""Threat: clients that walk away (or stall) keep the server working or waiting for them forever.

* A scoring request (``/v1/completions`` with ``echo``, ``logprobs``, ``max_tokens: 0``) whose client hung
  up went on scoring every prompt it held (up to 64 forward passes) for nobody; it now stops at the next
  prompt, and keeps its ``max_concurrency`` slot until the pass in progress ends.
* A request body that stops arriving (a chunk announced and never sent, a Content-Length never reached)
  had no read timeout: its connection and coroutine stayed until the client chose to leave. A pause
  longer than ``BODY_READ_TIMEOUT_S`` between two pieces of a body is now a 408 in OpenAI's envelope,
  and the connection closes.

The scoring module is scripted: its pass over the first prompt waits until the test has hung up.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlparse

import pytest

import modules.server.body_limit as body_limit
from modules.base import Completion, StreamDelta
from modules.server.app import ServerThread, create_app


class _HeldScoring:
    """A servable module whose scoring of the first prompt waits until the test lets it go."""

    name = "scorer"

    def __init__(self) -> None:
        self.scoring, self.release = threading.Event(), threading.Event()
        self.scored: list[str] = []

    def prepare(self, messages: Any, tools: Any = None, **generation: Any) -> Any:
        return messages

    def prepare_text(self, prompt: str, **generation: Any) -> Any:
        return prompt

    def generate(self, request: Any, cancel: Any = None) -> Completion:
        return Completion(text="ok", finish_reason="stop", usage={})

    def generate_stream(self, request: Any, cancel: Any = None) -> Iterator[StreamDelta]:
        yield StreamDelta(text="ok", finish_reason="stop")

    def text_logprobs(self, texts: Sequence[str], *, top: int = 0) -> list[dict[str, Any]]:
        out = []
        for text in texts:
            self.scoring.set()
            self.release.wait(timeout=10)
            self.scored.append(text)
            out.append({"tokens": [text], "token_logprobs": [None], "text_offset": [0], "top_logprobs": [None]})
        return out


def _wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + 10  # a bound on waiting, not a timing assertion
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def _post(url: str, body: bytes, head: bytes = b"") -> socket.socket:
    where = urlparse(url)
    sock = socket.create_connection((where.hostname, where.port), timeout=15)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + head + body)
    return sock


def test_a_scoring_request_whose_client_hung_up_stops_at_the_next_prompt() -> None:
    module = _HeldScoring()
    app = create_app(module)
    state = app.state.prompter
    server = ServerThread(app).start()
    try:
        prompts = ["first", "second", "third", "fourth"]
        body = json.dumps(
            {"model": "scorer", "prompt": prompts, "echo": True, "logprobs": 0, "max_tokens": 0}
        ).encode()
        sock = _post(server.url, body, b"Content-Length: %d\r\n\r\n" % len(body))
        assert module.scoring.wait(timeout=30)
        sock.close()  # the client hangs up while the first prompt is being scored
        _wait_for(lambda: any(cancel.is_set() for cancel in list(state.cancels)), "the hang-up went unnoticed")
        assert state.in_flight == 1  # the pass in progress still holds its slot
        module.release.set()
        _wait_for(lambda: state.in_flight == 0, "the slot was never given back")
        assert module.scored == ["first"]  # the three prompts left were never scored for nobody
    finally:
        module.release.set()
        server.stop()


def test_a_scoring_request_still_answers_every_prompt() -> None:
    import httpx

    module = _HeldScoring()
    module.release.set()
    server = ServerThread(create_app(module)).start()
    try:
        body = {"model": "scorer", "prompt": ["a", "b", "c"], "echo": True, "logprobs": 0, "max_tokens": 0}
        reply = httpx.post(server.url + "/v1/completions", json=body, timeout=30)
    finally:
        server.stop()
    assert reply.status_code == 200
    assert [c["logprobs"]["tokens"] for c in reply.json()["choices"]] == [["a"], ["b"], ["c"]]
    assert module.scored == ["a", "b", "c"]


@pytest.mark.parametrize(
    "head",
    [b"Content-Length: 1000\r\n\r\n", b"Transfer-Encoding: chunked\r\n\r\n40\r\n"],
    ids=["content-length-never-reached", "chunk-announced-never-sent"],
)
def test_a_stalled_request_body_gets_408_and_the_connection_closes(
    head: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(body_limit, "BODY_READ_TIMEOUT_S", 0.3, raising=False)
    module = _HeldScoring()
    server = ServerThread(create_app(module)).start()
    try:
        sock = _post(server.url, b'{"model": "scorer", "prompt": ', head)
        answer = b""
        while chunk := sock.recv(65536):  # the server closes the connection: recv ends
            answer += chunk
        sock.close()
    finally:
        server.stop()
    status, _, rest = answer.partition(b"\r\n")
    headers, _, body = rest.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"content-type: application/json" in headers.lower()
    error = json.loads(body)["error"]
    assert error["code"] == "request_timeout" and error["type"] == "invalid_request_error"
    assert "stopped arriving" in error["message"] and "without pausing" in error["message"]
