"""A text-only chat template refusing a media part shows its type short, with the right article.

The message echoed the caller's ``type`` whole (a 100,000-character type made a 100,000-character
error) and wrote "a 'image_url' part"/"a 'input_audio' part". Now a str type is shown at most 40
characters long and a type of another kind by its type's name, after "an" where it starts with a vowel.
"""

from __future__ import annotations

import pytest

from prompter.errors import UnsupportedContentError
from prompter.formats.model_format import ModelFormat


@pytest.mark.parametrize(
    "kind, shown",
    [("image_url", "an 'image_url' part"), ("input_audio", "an 'input_audio' part"), ("video_url", "a 'video_url' part"), (5, "an int part")],
    ids=["image_url", "input_audio", "video_url", "int"],
)
def test_the_part_is_named_with_its_article(kind: object, shown: str) -> None:
    with pytest.raises(UnsupportedContentError) as info:
        ModelFormat.get("qwen2.5").render([{"role": "user", "content": [{"type": kind}]}])
    assert str(info.value).startswith(f"messages[0].content[0]: {shown} cannot be rendered")


def test_a_huge_type_is_not_echoed_whole() -> None:
    with pytest.raises(UnsupportedContentError) as info:
        ModelFormat.get("qwen2.5").render([{"role": "user", "content": [{"type": "x" * 100_000}]}])
    assert len(str(info.value)) < 300
