"""An image in an unnamed assistant turn fails before sending, on every source that speaks OpenAI's dialect.

The loopback server, written from OpenAI's API reference, answers 400 to an assistant message with an
``image_url`` part, as the API does. The module sent the turn as it was and the caller got a
``BadRequestError`` after a round trip; now the renderer refuses it with an
``UnsupportedContentError`` naming the message, and nothing is sent
(tests/render/test_assistant_media_refused_by_text_only_dialects.py has the renderer's side).
"""

from __future__ import annotations

import pytest
from wire.openai import KEY, OpenAIServer

from modules import OnlineChatModule
from prompter.errors import UnsupportedContentError

HISTORY = [
    {"role": "user", "content": "Draw a cat."},
    {"role": "assistant", "content": [{"type": "text", "text": "Here it is."},
                                      {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]},
]  # fmt: skip


@pytest.mark.parametrize("source", ["openai", "glm", "openai-compatible"])
def test_an_assistant_image_fails_before_anything_is_sent(source):
    with OpenAIServer() as server:
        m = OnlineChatModule(source, model="gpt-4o", api_key=KEY, base_url=server.api_root, max_retries=0)
        with pytest.raises(UnsupportedContentError, match=r"^history\[1\]\.content\[1\]: "):
            m("Again.", history=HISTORY)
        with pytest.raises(UnsupportedContentError):
            list(m.stream("Again.", history=HISTORY))
        assert m("Again.", history=HISTORY, strategy="multi_agent") == server.text  # the remedy it names
        m.close()
    assert len(server.received) == 1
