"""OpenAI's chat completions take text only in a tool message (a tool message's content parts are text parts;
the API has answered "Image URLs are only allowed for messages with role 'user'" for one there): format='openai'
refuses an image, audio or video part in a tool result with an UnsupportedContentError naming the part and the
remedy, as format='zhipu' already did, instead of sending a body the API rejects. Text parts still pass, and a
dialect whose tool results take images (Anthropic's ``tool_result`` blocks) still sends them."""

from __future__ import annotations

from typing import Any

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter
from prompter.errors import UnsupportedContentError

PARTS = {
    "image": {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    "audio": {"type": "input_audio", "input_audio": {"data": "UklGRiQAAABXQVZF", "format": "wav"}},
    "video": {"type": "video_url", "video_url": {"url": "https://example.com/clip.mp4"}},
}
CALL = {"id": "c1", "type": "function", "function": {"name": "shoot", "arguments": "{}"}}


def history(*parts: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Take a screenshot."},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "taken"}, *parts]},
    ]


@pytest.mark.parametrize("strategy", [None, "chat", "auto"])
@pytest.mark.parametrize("kind", sorted(PARTS))
def test_a_media_part_in_an_openai_tool_message_is_refused_naming_it(kind: str, strategy: str | None) -> None:
    options = {} if strategy is None else {"strategy": strategy}
    with pytest.raises(UnsupportedContentError, match=r"^history\[2\]\.content\[1\]: .*tool message.*user message"):
        ChatPrompter(system="").generate_prompt("Describe it.", history=history(PARTS[kind]), format="openai", **options)
    with pytest.raises(UnsupportedContentError, match=r"^input\[2\]\.content\[1\]: .*tool message"):
        ChatPrompter(system="").generate_prompt([*history(PARTS[kind])], format="openai")


def test_text_parts_in_an_openai_tool_message_still_pass() -> None:
    body = ChatPrompter(system="").generate_prompt("Describe it.", history=history(), format="openai")
    CHECKS["openai"](body)
    assert body["messages"][2]["content"] == [{"type": "text", "text": "taken"}]


def test_anthropic_still_sends_the_image_of_a_tool_result() -> None:
    body = ChatPrompter(system="").generate_prompt("Describe it.", history=history(PARTS["image"]), format="anthropic")
    CHECKS["anthropic"](body)
    result = body["messages"][2]["content"][0]
    assert result["type"] == "tool_result"
    assert result["content"][-1] == {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}}
