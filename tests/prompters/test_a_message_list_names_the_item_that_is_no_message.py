"""A list of messages as input with one item that is no message dict: the error names that item.

Before, ``[{"role": "user", ...}, 5]`` given directly said only ``input: expected str, int, a dict of
slot values or message dict(s), got list`` (the caller had to find the bad item), while the same list
under a dict key already said ``input['input'][1]: expected a message dict, got int``.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import ChatPrompter
from prompter.errors import MessageError

USER = {"role": "user", "content": "x"}


@pytest.mark.parametrize(
    ("said", "where"),
    [([USER, 5], r"input\[1\]"), ([None, USER], r"input\[0\]"), ((USER, "y"), r"input\[1\]")],
    ids=["int-after", "none-before", "str-in-a-tuple"],
)
@pytest.mark.parametrize("fmt", [None, "openai"])
def test_the_item_that_is_no_message_is_named(said: Any, where: str, fmt: Any) -> None:
    with pytest.raises(MessageError, match=where + r": expected a message dict, got"):
        ChatPrompter(system="").generate_prompt(said, format=fmt)


def test_the_same_list_under_a_key_says_the_same() -> None:
    with pytest.raises(MessageError, match=r"input\['input'\]\[1\]: expected a message dict, got int"):
        ChatPrompter("{a}", system="").generate_prompt({"a": "v", "input": [USER, 5]})
