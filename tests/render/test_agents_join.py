"""prompter.join: AgentScope's PromptEngine.join, with a one-pass format_map."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import prompter
from prompter.errors import MessageError, MissingSlotError, PromptTypeError

MEMORY = [{"name": "user", "content": "What's the weather like today?"}]


def test_join_is_exported_lazily() -> None:
    assert "join" in prompter.__all__ and callable(prompter.join)


def test_string_prompt_joins_parts_with_newlines_and_messages_as_name_lines() -> None:
    got = prompter.join("You're a helpful assistant.", MEMORY, "Please respond in JSON format.")
    assert got == "You're a helpful assistant.\nuser: What's the weather like today?\nPlease respond in JSON format."


def test_list_prompt_as_agentscope_writes_it() -> None:
    got = prompter.join("You're a helpful assistant.", MEMORY, as_messages=True)
    assert got == [
        {"role": "assistant", "content": "You're a helpful assistant."},
        {"name": "user", "role": "assistant", "content": "What's the weather like today?"},
    ]


def test_none_parts_are_left_out_and_nested_lists_flattened() -> None:
    assert prompter.join("a", None, [[{"role": "user", "content": "b"}], "c"]) == "a\nuser: b\nc"
    assert prompter.join(None, ["x", ["y"]], as_messages=True) == [
        {"role": "assistant", "content": "x"},
        {"role": "assistant", "content": "y"},
    ]


def test_format_map_fills_the_string_parts() -> None:
    got = prompter.join("Find the weather in {location}.", format_map={"location": "London"})
    assert got == "Find the weather in London."


def test_braces_in_history_never_raise_and_are_never_filled() -> None:
    # AgentScope formats the joined string: a '{' in memory raises, a '{location}' there is filled
    memory = [{"name": "Bob", "content": 'JSON: {"a": 1} and {location}'}]
    got = prompter.join("In {location}:", memory, format_map={"location": "{secret}"})
    assert got == 'In {secret}:\nBob: JSON: {"a": 1} and {location}'
    listed = prompter.join("In {location}:", memory, format_map={"location": "Paris"}, as_messages=True)
    assert listed[1]["content"] == 'JSON: {"a": 1} and {location}'


def test_missing_format_map_key_names_the_slot() -> None:
    with pytest.raises(MissingSlotError, match="location"):
        prompter.join("Weather in {location}", format_map={})


def test_structured_content_is_str_in_a_string_prompt_and_json_in_a_list_prompt() -> None:
    """AgentScope 0.0.4/0.0.6a2 ``utils/tools.py``: ``to_dialog_str`` writes f"{speaker}: {content}",
    ``to_openai_dict`` JSON-encodes through ``_convert_to_str``."""
    assert prompter.join({"name": "tool", "content": {"temp": 18}}) == "tool: {'temp': 18}"
    assert prompter.join({"name": "tool", "content": {"temp": 18}}, as_messages=True)[0]["content"] == '{"temp": 18}'


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: prompter.join({"name": "x"}), MessageError),
        (lambda: prompter.join({"name": "x"}, as_messages=True), MessageError),
        (lambda: prompter.join("a", format_map=["x"]), PromptTypeError),
        (lambda: prompter.join("a", as_messages="yes"), PromptTypeError),
        (lambda: prompter.join(object()), PromptTypeError),
    ],
    ids=["no-content", "no-content-list", "format-map-list", "as-messages-str", "unknown-object"],
)
def test_bad_parts_are_typed_errors(call: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        call()


@settings(max_examples=100, deadline=None)
@given(
    history=st.lists(
        st.fixed_dictionaries({"name": st.text(min_size=1, max_size=8), "content": st.text(max_size=30)}), max_size=4
    ),
    value=st.text(max_size=20),
)
def test_history_text_and_values_arrive_verbatim(history: list[dict[str, str]], value: str) -> None:
    before = copy.deepcopy(history)
    got = prompter.join("Q {x}", history, format_map={"x": value})
    assert got == "\n".join([f"Q {value}", *(f"{m['name']}: {m['content']}" for m in history)])
    assert history == before
