"""A playground client cannot make the server read its own files and send them back.

Before the fix, a history holding ``{"type": "image_url", "image_url": {"url": "file:///.../secret.png"}}``
rendered to an OpenAI, Anthropic, Gemini or Ollama body gave the file's bytes back as base64, through
``POST /api/render`` and through the page's link: the playground rendered with local files allowed, where
the server's own ``/v1`` endpoints refuse them (``local_files(False)``).
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from pathlib import Path

import pytest
import requests

SECRET = b"\x89PNG\r\n\x1a\nSECRET-CONTENTS-1234"


def _history(path: Path) -> str:
    return json.dumps(
        [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": path.as_uri()}}]},
            {"role": "assistant", "content": "ok"},
        ]
    )


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "gemini", "ollama", "dashscope"])
def test_a_local_file_in_a_history_is_refused_not_read(playground_url: str, tmp_path: Path, dialect: str) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(SECRET)
    state = {"instruction": "x", "input": "q", "history": _history(secret), "format": dialect}
    response = requests.post(playground_url + "api/render", json={"state": state}, timeout=60)

    assert response.status_code == 400, response.text[:300]
    assert "local files are not read here" in response.json()["error"]["message"]
    assert base64.b64encode(SECRET).decode() not in response.text
    assert str(secret) not in response.text


def test_the_pages_link_does_not_read_a_local_file_either(playground_url: str, tmp_path: Path) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(SECRET)
    query = urllib.parse.urlencode({"instruction": "x", "input": "q", "history": _history(secret), "format": "openai"})
    page = requests.get(playground_url + "?" + query, timeout=60)

    assert page.status_code == 200
    assert base64.b64encode(SECRET).decode() not in page.text
