"""The server renders a client's request with local media paths refused: a path in an HTTP request names
a file on the server's own disk, and a client must never get it read into a prompt."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from modules.server.app import _without_local_files
from prompter import ChatPrompter
from prompter.errors import UnsupportedContentError


def test_a_client_cannot_make_the_server_read_its_own_image_files(tmp_path: Path) -> None:
    secret = tmp_path / "server-secret.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\n" + b"server-only bytes" * 4)
    turn = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": str(secret)}}]}

    def render() -> object:
        return ChatPrompter(system="").generate_prompt(turn, format="openai")

    assert base64.b64encode(secret.read_bytes()).decode() in str(render())  # an application may read its files
    with pytest.raises(UnsupportedContentError, match="local files are not read"):
        _without_local_files(render)
