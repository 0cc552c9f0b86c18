"""A context overflow's 400 names the request's own fields and a remedy an HTTP client can apply.

The server passed on ``TrainableModule``'s Python message: "max_new_tokens is
5000 ... pass trim='oldest'", a keyword no HTTP client has and an option it
cannot send. Now the message says ``max_tokens`` and the field to shorten
(``messages``, or ``prompt`` on ``/v1/completions``), with the token counts.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

LONG = "cats " * 3000  # over the tiny model's 2048-token context

CASES = [
    pytest.param(
        "/chat/completions",
        {"messages": [{"role": "user", "content": LONG}], "max_tokens": 8},
        "messages",
        "; shorten the messages",
        id="chat-long-messages",
    ),
    pytest.param(
        "/chat/completions",
        {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5000},
        "messages",
        "max_tokens is 5000",
        id="chat-max-tokens-alone",
    ),
    pytest.param(
        "/chat/completions",
        {"messages": [{"role": "user", "content": "cats " * 1000}], "max_tokens": 1500},
        "messages",
        "shorten the messages or lower max_tokens (at most ",
        id="chat-both",
    ),
    pytest.param("/completions", {"prompt": LONG}, "prompt", "; shorten the prompt", id="text-long-prompt"),
    pytest.param(
        "/completions", {"prompt": "cats", "max_tokens": 4000}, "prompt", "send a max_tokens below 2048", id="text-max"
    ),
    pytest.param(
        "/completions",
        {"prompt": LONG, "echo": True, "logprobs": 1, "max_tokens": 0},
        "prompt",
        "; shorten the prompt",
        id="scoring",
    ),
]


@pytest.mark.parametrize(("path", "body", "param", "said"), CASES)
def test_a_context_overflow_names_the_request_fields(
    served_module: TrainableModule,  # noqa: F811
    path: str,
    body: dict[str, Any],
    param: str,
    said: str,
) -> None:
    streams = [False] if body.get("max_tokens") == 0 else [False, True]  # scoring answers in one piece
    for stream in streams:
        reply = httpx.post(served_module.url + path, json={"model": "tiny", "stream": stream, **body}, timeout=120)
        assert reply.status_code == 400, reply.text
        error = reply.json()["error"]
        assert error["code"] == "context_length_exceeded" and error["param"] == param, error
        assert said in error["message"] and "2048 tokens" in error["message"], error
        assert "max_new_tokens" not in error["message"] and "trim" not in error["message"], error
