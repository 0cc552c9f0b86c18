"""``file://localhost/path`` names the local file ``/path`` (RFC 8089), as ``file:///path`` does: it was read
as the relative path ``localhost/path``, so the image was skipped with a warning."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from prompter import ChatPrompter

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", ""])
def test_a_file_url_on_localhost_reads_the_local_file(tmp_path: Path, host: str) -> None:
    path = tmp_path / "cat.png"
    path.write_bytes(PNG)
    url = f"file://{host}{path}"
    message = {"role": "user", "content": [{"type": "text", "text": "Look"}, {"type": "image_url", "image_url": {"url": url}}]}
    body = ChatPrompter(system="").generate_prompt(message, format="anthropic")
    assert body["messages"][0]["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }
