"""``stream_options`` without ``stream: true`` is a 400, as OpenAI answers it, never silently ignored.

The server promises that an option it cannot honour is refused; usage options for a
stream that does not exist cannot be honoured. ``stream_options: null`` stays "not given".
"""

from __future__ import annotations

import httpx
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

BODIES = {
    "/chat/completions": {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2},
    "/completions": {"model": "tiny", "prompt": "hi", "max_tokens": 2},
}


@pytest.mark.parametrize("path", sorted(BODIES))
@pytest.mark.parametrize("stream", [None, False])
def test_stream_options_without_a_stream_is_refused(served_module: TrainableModule, path: str, stream: object) -> None:  # noqa: F811
    body = {**BODIES[path], "stream_options": {"include_usage": True}}
    if stream is not None:
        body["stream"] = stream
    reply = httpx.post(served_module.url + path, json=body, timeout=30)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == "stream_options" and "stream=true" in error["message"]


@pytest.mark.parametrize("path", sorted(BODIES))
def test_a_null_stream_options_is_not_given(served_module: TrainableModule, path: str) -> None:  # noqa: F811
    reply = httpx.post(served_module.url + path, json={**BODIES[path], "stream_options": None}, timeout=30)
    assert reply.status_code == 200, reply.text
