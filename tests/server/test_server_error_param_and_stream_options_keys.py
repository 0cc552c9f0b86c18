"""An error's ``param`` is capped like its message, and an unknown ``stream_options`` key is refused.

Before, an unknown top-level key of a megabyte came back whole as ``param`` (a 1 MB error body:
the envelope's size cap held for the message only), and ``stream_options: {"anything": ...}`` was
accepted and silently ignored.
"""

from __future__ import annotations

import httpx
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}


def test_a_megabyte_key_does_not_come_back_whole_in_param(served_module: TrainableModule) -> None:  # noqa: F811
    key = "k" * 1_000_000
    reply = httpx.post(served_module.url + "/chat/completions", json={**CHAT, key: 1}, timeout=30)
    assert reply.status_code == 400
    assert len(reply.content) < 4000
    error = reply.json()["error"]
    assert error["param"].startswith("kkk") and error["param"].endswith("...") and len(error["param"]) <= 1003
    assert len(error["message"]) <= 1003


@pytest.mark.parametrize("path", ["/chat/completions", "/completions"])
def test_an_unknown_stream_options_key_is_refused_by_name(served_module: TrainableModule, path: str) -> None:  # noqa: F811
    body = {**CHAT} if path == "/chat/completions" else {"model": "tiny", "prompt": "hi", "max_tokens": 2}
    body |= {"stream": True, "stream_options": {"include_usage": True, "include_usag": True}}
    reply = httpx.post(served_module.url + path, json=body, timeout=30)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == "stream_options.include_usag"


def test_openai_s_include_obfuscation_is_accepted(served_module: TrainableModule) -> None:  # noqa: F811
    body = {**CHAT, "stream": True, "stream_options": {"include_usage": True, "include_obfuscation": False}}
    with httpx.stream("POST", served_module.url + "/chat/completions", json=body, timeout=30) as reply:
        assert reply.status_code == 200
        lines = [line for line in reply.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]" and '"usage": {' in lines[-2]
