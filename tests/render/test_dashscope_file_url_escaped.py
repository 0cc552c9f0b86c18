"""DashScope's local files: the ``file://`` URL reads back as the same file in DashScope's SDK.

The SDK uploads a local file named by a ``file://`` URL after reading the path back with
``urlparse`` and ``unquote_plus`` (``dashscope/utils/oss_utils.py``, ``upload_file`` /
``check_and_upload_local``). A path written as it is loses everything after a ``#`` or ``?``
and turns ``+`` into a space and ``%41`` into ``A``: the SDK then refuses the request
("The file ... is not exists!"). prompter escapes those characters.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from urllib.parse import unquote_plus, urlparse

import pytest

from prompter import ChatPrompter

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _sdk_path(url: str) -> str:
    """The path DashScope's SDK reads from a ``file://`` URL (its own two lines)."""
    parsed = urlparse(url)
    return parsed.netloc + unquote_plus(parsed.path) if parsed.netloc else unquote_plus(parsed.path)


@pytest.mark.parametrize(
    "name", ["photo #1.png", "a+b.png", "100%41.png", "what?.png", "plain.png", "with space.png", "café.png"]
)
@pytest.mark.parametrize("given_as", ["path", "file-url"])
def test_dashscope_file_url_names_the_same_file_for_the_sdk(tmp_path: Path, name: str, given_as: str) -> None:
    path = tmp_path / name
    path.write_bytes(PNG)
    url = str(path) if given_as == "path" else "file://" + str(path).replace("%", "%25").replace("#", "%23")
    if given_as == "file-url":
        url = url.replace("?", "%3F")
    message = {
        "role": "user",
        "content": [{"type": "text", "text": "Look"}, {"type": "image_url", "image_url": {"url": url}}],
    }
    body = ChatPrompter(system="").generate_prompt(message, format="dashscope")
    sent = body["input"]["messages"][0]["content"][1]["image"]
    assert sent.startswith("file://")
    assert _sdk_path(sent) == str(path)
    assert os.path.isfile(_sdk_path(sent))


def test_a_plain_path_is_still_written_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "park.png"
    path.write_bytes(PNG)
    message = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": str(path)}}]}
    body = ChatPrompter(system="").generate_prompt(message, format="dashscope")
    assert body["input"]["messages"][0]["content"] == [{"image": "file://" + str(path)}]
