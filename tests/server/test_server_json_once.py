"""The server parses a request body's JSON once (the strict parse), not again inside FastAPI."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule


def test_a_chat_body_is_decoded_as_json_once(
    served_module: TrainableModule,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = json.dumps({"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
    decoded: list[str] = []
    original = json.JSONDecoder.decode

    def spy(self: json.JSONDecoder, s: str, *args: Any, **kwargs: Any) -> Any:
        if s == body:
            decoded.append(s)
        return original(self, s, *args, **kwargs)

    monkeypatch.setattr(json.JSONDecoder, "decode", spy)
    response = httpx.post(
        served_module.url + "/chat/completions", content=body, headers={"Content-Type": "application/json"}, timeout=30
    )
    assert response.status_code == 200
    assert len(decoded) == 1


