"""A local model's text under a strategy names a refused media part where the caller gave it.

``strategy="multi_agent"`` (and ``"auto"``/``"chat"`` when they merge, or ``as_agent=``) moves every
message into one user turn before the model format renders it. The refusal named the merged turn:
``input.content[1]`` for an audio part the caller gave at ``history[0].content[0]``. The API dialects
already named the caller's place (their part checks run before the merge); the text format now does too,
with a model's template (``content[k]``) and with the plain layout (the message's ``content``).
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import ChatPrompter
from prompter.errors import UnsupportedContentError

AUDIO = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}


def test_the_issue_example_names_the_history_message() -> None:
    history = [{"role": "user", "name": "A", "content": [AUDIO]}]
    with pytest.raises(UnsupportedContentError, match=r"^history\[0\]\.content\[0\]: an audio part") as info:
        ChatPrompter("x").generate_prompt("hi", model_format="qwen2.5", history=history, strategy="multi_agent")
    assert "input" not in str(info.value).split(":")[0]


HISTORY = [
    {"role": "user", "name": "A", "content": "hello"},
    {"role": "assistant", "name": "B", "content": [{"type": "text", "text": "see"}, IMAGE]},
    {"role": "user", "name": "C", "content": [AUDIO]},
]


@pytest.mark.parametrize(
    "options",
    [{"strategy": "multi_agent"}, {"strategy": "auto"}, {"strategy": "chat"}, {"as_agent": "A"},
     {"strategy": "multi_agent", "as_agent": "B"}, {"strategy": "multi_agent", "history_header": "## H"}],
    ids=["multi_agent", "auto", "chat", "as_agent", "multi_agent-as_agent", "own-header"],
)  # fmt: skip
@pytest.mark.parametrize(
    ("model_format", "place"),
    [("qwen2.5", r"history\[1\]\.content\[1\]"), ("llama-3.2", r"history\[1\]\.content\[1\]"),
     (None, r"history\[1\]\.content")],
    ids=["qwen2.5", "llama-3.2", "plain-layout"],
)  # fmt: skip
def test_every_arrangement_names_the_first_media_part_where_it_was_given(
    options: dict[str, Any], model_format: str | None, place: str
) -> None:
    with pytest.raises(UnsupportedContentError, match=rf"^{place}: an image_url part cannot be rendered"):
        ChatPrompter("x").generate_prompt("hi", model_format=model_format, history=HISTORY, **options)


def test_a_media_part_of_the_input_is_named_in_the_input() -> None:
    message = {"role": "user", "name": "A", "content": [{"type": "text", "text": "look"}, IMAGE]}
    with pytest.raises(UnsupportedContentError, match=r"^input\.content\[1\]: an image_url part"):
        ChatPrompter("x").generate_prompt(
            message, model_format="qwen2.5", history=[("q", "a")], strategy="multi_agent"
        )


def test_the_arranged_text_without_media_is_unchanged() -> None:
    text_only = [{"role": "user", "name": "A", "content": "hello"}, {"role": "assistant", "name": "B", "content": "hi"}]
    rendered = ChatPrompter("x").generate_prompt("go", model_format="qwen2.5", history=text_only, strategy="multi_agent")
    assert "A: hello\nB: hi" in rendered
