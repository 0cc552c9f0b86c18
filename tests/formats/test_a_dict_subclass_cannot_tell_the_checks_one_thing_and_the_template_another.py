"""A ``dict`` subclass passed to ``ModelFormat.render`` is read by its stored items, in every family.

Threat: a message object whose own ``items()`` or ``get()`` says something other than what it
stores. Before, the role check read ``message.get("role")`` and the template's copy was made
from ``message.items()``: a message storing ``role="user"`` whose ``items()`` said ``"bot"``
rendered a ``bot`` turn no check had seen, and a raising ``get`` or ``items`` came out of
``render`` as the caller's own ``RuntimeError``. Now every reader takes the stored items, so
the caller's methods never run, and a dict key that is not JSON's (a tuple) is an
``InputTypeError`` naming where, in messages and in tool schemas alike.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter.errors import InputTypeError, PromptError
from prompter.formats.model_format import ModelFormat

FAMILIES = ModelFormat.families()
TOOLS = [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}]


class SaysBot(dict):  # type: ignore[type-arg]
    """Stores a user message; its own ``items`` and ``get`` say it is a ``bot`` turn."""

    def items(self) -> Any:
        return [("role", "bot"), ("content", "hi")]

    def get(self, key: Any, default: Any = None) -> Any:
        return dict(self.items()).get(key, default)


class Raises(dict):  # type: ignore[type-arg]
    """Every method of its own raises."""

    def items(self) -> Any:
        raise RuntimeError("the caller's items() ran")

    def get(self, *args: Any) -> Any:
        raise RuntimeError("the caller's get() ran")

    def keys(self) -> Any:
        raise RuntimeError("the caller's keys() ran")

    def values(self) -> Any:
        raise RuntimeError("the caller's values() ran")

    def __iter__(self) -> Any:
        raise RuntimeError("the caller's __iter__ ran")


def outcome(render: Any, *args: Any, **kwargs: Any) -> str:
    """What a render gives: its text, or its typed error (a template that refuses the conversation refuses
    it whatever object holds it)."""
    try:
        result = render(*args, **kwargs)
    except PromptError as exc:
        return f"{type(exc).__name__}: {exc}"
    return result if isinstance(result, str) else result[0]


def plain_conversation() -> list[dict[str, Any]]:
    return [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "ok"}]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_message_renders_as_it_stores_not_as_its_methods_say(family: str) -> None:
    fmt = ModelFormat.get(family)
    expected = fmt.render(plain_conversation())
    for kind in (SaysBot, Raises):
        messages = [kind(m) for m in plain_conversation()]
        assert fmt.render(messages) == expected, kind.__name__
        text, _spans = fmt.render_with_spans(messages)
        assert text == expected, kind.__name__


@pytest.mark.parametrize("family", FAMILIES)
def test_a_tool_schema_of_a_dict_subclass_renders_as_it_stores(family: str) -> None:
    fmt = ModelFormat.get(family)
    expected = outcome(fmt.render, plain_conversation(), tools=TOOLS)
    tools = [Raises({"type": "function", "function": Raises(TOOLS[0]["function"])})]
    assert outcome(fmt.render, plain_conversation(), tools=tools) == expected
    assert outcome(fmt.render_with_spans, plain_conversation(), tools=tools) == expected


@pytest.mark.parametrize("family", FAMILIES)
def test_a_tuple_key_in_a_tool_schema_is_a_typed_error_naming_the_tool(family: str) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", (1, 2): "a"}}}]
    with pytest.raises(InputTypeError, match=r"tools\[0\]: holds a dict key of type 'tuple'.*convert the key"):
        ModelFormat.get(family).render(plain_conversation(), tools=tools)


def test_a_tuple_key_in_a_message_is_a_typed_error_naming_the_message() -> None:
    messages = [{"role": "user", "content": "hi", "metadata": {(1, 2): "a"}}]
    with pytest.raises(InputTypeError, match=r"messages\[0\]\.metadata: holds a dict key of type 'tuple'"):
        ModelFormat.get("qwen2.5").render(messages)


def agent_conversation(wrap: Any) -> list[Any]:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": wrap({"city": "Paris"})}}
    return [
        wrap({"role": "user", "content": "weather?"}),
        wrap({"role": "assistant", "content": "", "tool_calls": [wrap(call)]}),
        wrap({"role": "tool", "tool_call_id": "c1", "content": "sunny"}),
        wrap({"role": "user", "content": [wrap({"type": "text", "text": "thanks"})]}),
    ]


@pytest.mark.parametrize("family", FAMILIES)
def test_tool_calls_and_parts_of_dict_subclasses_render_as_they_store(family: str) -> None:
    fmt = ModelFormat.get(family)
    expected = outcome(fmt.render, agent_conversation(dict), tools=TOOLS)
    assert outcome(fmt.render, agent_conversation(Raises), tools=TOOLS) == expected
    assert outcome(fmt.render_with_spans, agent_conversation(Raises), tools=TOOLS) == expected
