"""An image, audio or video part in an unnamed assistant turn is refused by ``openai`` and ``zhipu``.

OpenAI's Chat Completions API takes only ``text`` and ``refusal`` parts in an assistant message
(its reference: ``ChatCompletionRequestAssistantMessageContentPart``), and GLM's assistant
``content`` is a string. Both renderers sent such a part as it was, so the call ended in a 400
from the provider. Now a typed ``UnsupportedContentError`` names the message and part and the
remedy, before anything is sent, as Anthropic's renderer already did. A *named* agent's turn
with an image is still sent inside a user turn (the ``"chat"`` strategy's documented fallback),
and ``strategy="multi_agent"`` sends an unnamed one so. (Over HTTP: tests/online/
test_assistant_media_refused_before_sending.py.)
"""

from __future__ import annotations

import copy

import pytest

from prompter import ChatPrompter
from prompter.errors import UnsupportedContentError

PARTS = {
    "image by URL": {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    "image as data": {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    "audio": {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
}
DIALECTS = ["openai", "zhipu"]


def history(part: dict) -> list[dict]:
    return [
        {"role": "user", "content": "Draw a cat."},
        {"role": "assistant", "content": [{"type": "text", "text": "Here it is."}, part]},
    ]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("kind", sorted(PARTS))
def test_a_media_part_in_an_assistant_turn_is_refused_naming_where_it_is(dialect, kind):
    given = history(PARTS[kind])
    before = copy.deepcopy(given)
    with pytest.raises(UnsupportedContentError) as info:
        ChatPrompter().generate_prompt("Again.", history=given, format=dialect)
    message = str(info.value)
    assert message.startswith("history[1].content[1]: ")
    assert f"format={dialect!r}" in message and "assistant" in message
    assert "user message" in message and "strategy='multi_agent'" in message  # the remedy
    assert given == before  # the caller's history is untouched


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_remedies_named_by_the_error_send_the_image_in_a_user_turn(dialect):
    given = history(PARTS["image by URL"])
    body = ChatPrompter().generate_prompt("Again.", history=given, format=dialect, strategy="multi_agent")
    named = [given[0], {**given[1], "name": "painter"}]
    body_named = ChatPrompter().generate_prompt("Again.", history=named, format=dialect)
    for b in (body, body_named):
        assert all(m["role"] != "assistant" for m in b["messages"])
        user = b["messages"][-1]
        assert user["role"] == "user"
        assert {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}} in user["content"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_text_parts_in_an_assistant_turn_are_still_sent(dialect):
    given = [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}]
    body = ChatPrompter().generate_prompt("Again.", history=given, format=dialect)
    assert body["messages"][-2]["role"] == "assistant"
