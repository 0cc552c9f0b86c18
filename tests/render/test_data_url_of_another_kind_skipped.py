"""A ``data:`` URL whose media type names another kind of file is skipped like a ``.pdf`` web URL.

Given as an image, ``https://x/doc.pdf`` was skipped with a warning while
``data:application/pdf;base64,...`` went on: as is to OpenAI, Zhipu and DashScope (which
answer 400), into Ollama's ``images``, and as a typed error for Anthropic. Every dialect now
skips it with the same warning; an image ``data:`` URL (any case, or with no media type) is
kept as it was.
"""

from __future__ import annotations

import json
import logging

import pytest

from prompter import ChatPrompter

FORMATS = ["openai", "anthropic", "gemini", "ollama", "dashscope", "zhipu"]


def _message(url: str) -> dict[str, object]:
    return {"role": "user", "content": [{"type": "text", "text": "Look"}, {"type": "image_url", "image_url": {"url": url}}]}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "url", ["data:application/pdf;base64,JVBERi0x", "data:text/plain,hello", "data:audio/wav;base64,UklGRg=="]
)
def test_a_data_url_of_another_kind_is_skipped_with_a_warning(fmt: str, url: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="prompter"):
        body = ChatPrompter(system="").generate_prompt(_message(url), format=fmt)
    assert url.split(",")[1] not in json.dumps(body)
    assert any("skipped a data: URL" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("url", ["data:image/png;base64,iVBORw0KGgo=", "data:IMAGE/JPEG;base64,/9j/4AA="])
def test_an_image_data_url_is_kept(fmt: str, url: str) -> None:
    body = ChatPrompter(system="").generate_prompt(_message(url), format=fmt)
    assert url.split(",")[1] in json.dumps(body)
