"""A refused media part is named where the caller put it, in a sentence that reads right.

A single message given as the input was named ``input[0]`` (as if it were a
list), and an ``image_url`` part was "a image_url part".
"""

from __future__ import annotations

import pytest

from prompter import ChatPrompter
from prompter.errors import UnsupportedContentError

IMAGE = {"type": "image_url", "image_url": {"url": "http://x/a.png"}}


def test_one_message_as_the_input_is_named_input() -> None:
    message = {"role": "user", "content": [IMAGE]}
    with pytest.raises(UnsupportedContentError, match=r"^input\.content: an image_url part cannot be rendered"):
        ChatPrompter("I", system="S").generate_prompt(message)


def test_several_messages_are_named_by_index() -> None:
    messages = [{"role": "user", "content": "look"}, {"role": "user", "content": [IMAGE]}]
    with pytest.raises(UnsupportedContentError, match=r"^input\[1\]\.content: an image_url part"):
        ChatPrompter("I", system="S").generate_prompt(messages)


@pytest.mark.parametrize("fmt", ["openai", "zhipu"])
def test_an_api_dialect_refusal_reads_an_image_url_part(fmt: str) -> None:
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [IMAGE]}]
    with pytest.raises(UnsupportedContentError, match=r"not an 'image_url' part"):
        ChatPrompter("I").generate_prompt("more", history=history, format=fmt)
