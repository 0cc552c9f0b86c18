"""OpenAI's chat completions take text only in a system message (its system content parts are text parts;
the API answers "Image URLs are only allowed for messages with role 'user'"): format='openai' refuses an
image, audio or video part there with an UnsupportedContentError naming the part and the remedy, as
format='zhipu', 'anthropic', 'gemini' and 'dashscope' already did, instead of sending a body the API
rejects. Text parts in a system message still pass, and the merged history carries the media."""

from __future__ import annotations

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter
from prompter.errors import UnsupportedContentError

PARTS = {
    "image": {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    "audio": {"type": "input_audio", "input_audio": {"data": "UklGRiQAAABXQVZF", "format": "wav"}},
    "video": {"type": "video_url", "video_url": {"url": "https://example.com/clip.mp4"}},
}


@pytest.mark.parametrize("strategy", [None, "chat", "auto"])
@pytest.mark.parametrize("kind", sorted(PARTS))
def test_a_media_part_in_an_openai_system_message_is_refused_naming_it(kind: str, strategy: str | None) -> None:
    system = {"role": "system", "content": [{"type": "text", "text": "Rules."}, PARTS[kind]]}
    options = {} if strategy is None else {"strategy": strategy}
    with pytest.raises(UnsupportedContentError, match=r"history\[0\]\.content\[1\]: .*system message.*user message"):
        ChatPrompter(system="").generate_prompt("Hi.", history=[system], format="openai", **options)
    with pytest.raises(UnsupportedContentError, match=r"input\[0\]\.content\[1\]: .*system message"):
        ChatPrompter(system="").generate_prompt([system, {"role": "user", "content": "Hi."}], format="openai")


def test_text_parts_in_an_openai_system_message_still_pass() -> None:
    system = {"role": "system", "content": [{"type": "text", "text": "Rules."}]}
    body = ChatPrompter(system="").generate_prompt("Hi.", history=[system], format="openai")
    CHECKS["openai"](body)
    assert body["messages"][0] == {"role": "system", "content": [{"type": "text", "text": "Rules."}]}


def test_the_merged_history_sends_a_system_images_in_the_user_message() -> None:
    system = {"role": "system", "content": [{"type": "text", "text": "Rules."}, PARTS["image"]]}
    body = ChatPrompter(system="").generate_prompt(
        {"role": "user", "name": "Al", "content": "Hi."}, history=[system], format="openai", strategy="multi_agent"
    )
    CHECKS["openai"](body)
    assert body["messages"][-1]["content"][-1] == PARTS["image"]
