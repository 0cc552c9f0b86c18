"""A template that fails only on marked user text is reported in the user's own words.

Locating user text renders the request again with each user string between private sentinels
(``prompter.formats.spans``). A template that compares user text (and raises when it differs) fails
on that second render; its message quoted the marked text: the sentinels, and the nonce that
names the set, reached the caller's error.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from modules.errors import UnsafeTokenizationError
from modules.local.safe_tokens import render_with_spans

_SENTINEL = re.compile(r"[\ue000-\ue007]|~\d\d{12}\d~|\\u[eE]00[0-7]")


def _picky(messages: list[Any], tools: list[Any] | None) -> str:
    """A render function that takes only the greeting it knows, and says what it got otherwise."""
    content = messages[0]["content"]
    if content != "hello there":
        raise ValueError(f"this template only answers 'hello there', got {content!r}")
    return f"<s>{content}</s>"


def _picky_json(messages: list[Any], tools: list[Any] | None) -> str:
    import json

    content = messages[0]["content"]
    if content != "hello there":
        raise ValueError(f"this template only answers 'hello there', got {json.dumps(content)}")
    return f"<s>{content}</s>"


@pytest.mark.parametrize("render", [_picky, _picky_json], ids=["repr", "json-escaped"])
def test_the_error_quotes_the_users_text_without_sentinels(render: Any) -> None:
    with pytest.raises(UnsafeTokenizationError) as caught:
        render_with_spans([{"role": "user", "content": "hello there"}], render=render)
    message = str(caught.value)
    assert "this template only answers 'hello there'" in message
    assert "hello there" in message.split("got", 1)[1]  # what the template saw, as the user wrote it
    assert not _SENTINEL.search(message), message
