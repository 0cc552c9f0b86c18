"""A value whose truth test or ``==`` is no plain bool (a numpy array: "the truth value of an array ... is
ambiguous"; an object whose ``__bool__`` / ``__eq__`` raises) in a message's ``tool_calls``, a content part's
``type``, a tool's ``type`` or a ``join`` memory's ``name`` / ``role`` is a typed error naming the field: it
never decides a branch by its own truth test, so its ValueError (or whatever it raises) never escapes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from prompter import ChatPrompter, join
from prompter.errors import MessageError, PromptTypeError, ToolsError


class Boom(Exception):
    """Never a PromptError, so it cannot pass for one."""


class NoTruth:
    """An object whose truth test and comparisons raise (its hash works)."""

    def __bool__(self) -> bool:
        raise Boom("bool")

    def __eq__(self, other: object) -> bool:
        raise Boom("eq")

    def __ne__(self, other: object) -> bool:
        raise Boom("ne")

    __hash__ = object.__hash__


def _values() -> list[Any]:
    return [np.array([1, 2]), NoTruth()]


IDS = ["numpy-array", "raising-object"]
FORMATS = [None, "openai", "anthropic", "gemini", "ollama", "dashscope", "zhipu"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("value", _values(), ids=IDS)
def test_tool_calls_that_cannot_be_truth_tested_are_a_message_error_naming_them(value: Any, fmt: Any) -> None:
    message = {"role": "assistant", "content": "x", "tool_calls": value}
    with pytest.raises(MessageError, match=r"history\[0\]\.tool_calls: expected a list"):
        ChatPrompter().generate_prompt("q", history=[message], format=fmt)
    with pytest.raises(MessageError, match=r"input\.tool_calls: expected a list"):
        ChatPrompter().generate_prompt(message, format=fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("value", _values(), ids=IDS)
def test_a_content_part_type_that_cannot_be_compared_is_a_message_error_naming_the_part(value: Any, fmt: Any) -> None:
    message = {"role": "user", "content": [{"type": value, "text": "x"}]}
    with pytest.raises(MessageError, match=r"input\.content\[0\]: unsupported content part type"):
        ChatPrompter().generate_prompt(message, format=fmt)


@pytest.mark.parametrize("value", _values(), ids=IDS)
def test_a_tool_type_that_cannot_be_compared_is_a_tools_error_naming_the_tool(value: Any) -> None:
    tools = [{"type": value, "function": {"name": "now"}}]
    with pytest.raises(ToolsError, match=r"tools\[0\]: expected \{'type': 'function'"):
        ChatPrompter().generate_prompt("q", tools=tools, format="openai")
    with pytest.raises(ToolsError, match=r"tools\[0\]: expected \{'type': 'function'"):
        ChatPrompter(tools=tools)


@pytest.mark.parametrize("key", ["name", "role"])
@pytest.mark.parametrize("value", _values(), ids=IDS)
def test_a_join_speaker_that_cannot_be_truth_tested_is_a_prompt_type_error_in_both_forms(value: Any, key: str) -> None:
    memory = [{key: value, "content": "Hi"}]
    for as_messages in (False, True):
        with pytest.raises(PromptTypeError, match=rf"parts\[1\]\[0\]\.{key}: expected text"):
            join("Be brief.", memory, as_messages=as_messages)


def test_a_join_speaker_of_plain_values_still_reads_as_before() -> None:
    assert join([{"name": "", "role": "user", "content": "Hi"}]) == "user: Hi"
    assert join([{"name": 0, "role": "user", "content": "Hi"}]) == "user: Hi"
    assert join([{"name": 7, "content": "Hi"}]) == "7: Hi"
    assert join([{"name": None, "role": None, "content": "Hi"}]) == "Hi"
