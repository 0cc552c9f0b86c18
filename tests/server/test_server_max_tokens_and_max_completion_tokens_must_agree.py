"""``max_tokens`` and ``max_completion_tokens`` that disagree are a 400 naming both, never one silently dropped.

Both name a chat answer's length (``max_tokens`` is the older name). The server took
``max_completion_tokens or max_tokens``: ``max_tokens: 1`` with ``max_completion_tokens: 6`` was
answered with 6 tokens, the client's ``max_tokens`` ignored without a word (the module's own
``prepare()`` refuses such a pair). Equal values, or either alone, are served.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

CHAT: dict[str, Any] = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(("max_tokens", "max_completion_tokens"), [(1, 6), (6, 1)])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_two_answer_lengths_that_disagree_are_refused_naming_both(
    served_module: TrainableModule,  # noqa: F811
    max_tokens: int,
    max_completion_tokens: int,
    stream: bool,
) -> None:
    body = {**CHAT, "max_tokens": max_tokens, "max_completion_tokens": max_completion_tokens, "stream": stream}
    reply = httpx.post(served_module.url + "/chat/completions", json=body, timeout=60)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == "max_tokens", error
    said = error["message"]
    assert f"max_tokens={max_tokens}" in said and f"max_completion_tokens={max_completion_tokens}" in said, said
    assert "disagree" in said and "send one of them" in said, said


@pytest.mark.parametrize(
    "lengths",
    [{"max_tokens": 3, "max_completion_tokens": 3}, {"max_completion_tokens": 3}, {"max_tokens": 3}],
    ids=["equal", "max_completion_tokens-alone", "max_tokens-alone"],
)
def test_one_answer_length_is_served_and_bounds_the_answer(
    served_module: TrainableModule,  # noqa: F811
    lengths: dict[str, int],
) -> None:
    reply = httpx.post(served_module.url + "/chat/completions", json={**CHAT, **lengths}, timeout=60)
    assert reply.status_code == 200, reply.text
    assert reply.json()["usage"]["completion_tokens"] <= 3
