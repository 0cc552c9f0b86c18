"""docs/coming-from-langchain.md: the sentences that claim a behaviour, each checked on the real parts."""

from __future__ import annotations

import pytest

from prompter import ChatPrompter
from prompter.errors import MissingSlotError


def test_a_missing_variable_is_a_missing_slot_error_that_is_a_key_error_naming_every_slot() -> None:
    p = ChatPrompter("About {topic} for {audience} in {style}.", system="S")
    with pytest.raises(KeyError) as err:
        p.generate_prompt({"audience": "kids", "input": "q"}, format="openai")
    assert isinstance(err.value, MissingSlotError)
    with pytest.raises(MissingSlotError) as both:
        p.generate_prompt({"input": "q"}, format="openai")
    assert all(f"'{name}'" in str(both.value) for name in ("topic", "audience", "style"))


def test_extra_keys_are_rendered_as_a_labelled_block() -> None:
    body = ChatPrompter("I", extra_keys=["context"], system="S").generate_prompt(
        {"context": "Cats purr.", "input": "Why?"}, format="openai")
    assert "### context:\nCats purr.\n" in body["messages"][0]["content"]
    assert body["messages"][-1] == {"role": "user", "content": "Why?"}


def test_history_takes_pairs_or_openai_messages_with_tool_calls_alike() -> None:
    p = ChatPrompter("I", system="S")
    pairs = p.generate_prompt("q", history=[["Hi", "Hello!"]], format="openai")
    dicts = p.generate_prompt("q", history=[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}],
                              format="openai")
    assert pairs == dicts
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": None, "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "c1", "content": "42"}]
    messages = p.generate_prompt("q", history=history, format="openai")["messages"]
    assert messages[2]["tool_calls"] == [call] and messages[3]["tool_call_id"] == "c1"


def test_one_tool_list_reaches_each_dialect_in_its_own_shape() -> None:
    tools = [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}]
    p = ChatPrompter("I", system="S", tools=tools)
    assert p.generate_prompt("q", format="openai")["tools"] == tools
    assert p.generate_prompt("q", format="anthropic")["tools"] == [
        {"name": "f", "description": "d", "input_schema": {"type": "object"}}]
    gemini = p.generate_prompt("q", format="gemini")["tools"]
    assert gemini[0]["function_declarations"][0]["name"] == "f"
