"""prompter.join's format_map reads a string part as PromptEngine's ``str.format_map`` does.

AgentScope's ``PromptEngine.join_to_str`` ends with ``prompt_str.format_map(format_map)``: ``{{``
and ``}}`` are the way to write a brace, and ``{score:.2f}`` or ``{name!r}`` format a value.
prompter fills only the string parts (history is never read as a template), and where
``str.format_map`` reads a part it must give the same text: an escaped brace used to be
refused as a missing slot (the error even advised writing ``{{ }}``), and a format spec used
to leave the field unfilled in the prompt, silently.
"""

from __future__ import annotations

from typing import Any

import pytest

import prompter
from prompter.errors import MissingSlotError, PromptValueError


@pytest.mark.parametrize(
    "text, values",
    [
        ('Answer as {{"city": ...}} about {city}.', {"city": "Paris"}),
        ("a {{lit}} {x}", {"x": 1}),
        ("{{{x}}}", {"x": 2}),
        ("}} {x} {{", {"x": "y"}),
        ("Score: {score:.2f}", {"score": 0.5}),
        ("|{name:>8}|{name!r}|", {"name": "Bob"}),
        ("{n:03d} {flag}", {"n": 7, "flag": True}),
    ],
)
@pytest.mark.parametrize("as_messages", [False, True])
def test_a_string_part_reads_as_str_format_map_reads_it(text: str, values: dict[str, Any], as_messages: bool) -> None:
    got = prompter.join(text, format_map=values, as_messages=as_messages)
    expected = text.format_map(values)
    assert got == ([{"role": "assistant", "content": expected}] if as_messages else expected)


def test_history_braces_stay_unread_beside_an_escaped_instruction() -> None:
    memory = [{"name": "Bob", "content": "{{not}} {x} {x:>4}"}]
    assert prompter.join("{{x}} = {x:>3}", memory, format_map={"x": 1}) == "{x} =   1\nBob: {{not}} {x} {x:>4}"


def test_text_str_format_map_refuses_keeps_its_braces_as_before() -> None:
    # JSON, positional fields and lone braces: PromptEngine raises; prompter keeps them literal
    assert prompter.join('Like {"a": {"b": 1}} about {x}', format_map={"x": 1}) == 'Like {"a": {"b": 1}} about 1'
    assert prompter.join("{0} {x} }", format_map={"x": 1}) == "{0} 1 }"


def test_a_missing_value_and_a_spec_that_does_not_fit_are_typed_errors() -> None:
    with pytest.raises(MissingSlotError, match="city"):
        prompter.join("{{ok}} {city:>4}", format_map={})
    with pytest.raises(PromptValueError, match="format_map\\['x'\\]"):
        prompter.join("{x:d}", format_map={"x": "text"})


@pytest.mark.parametrize("key", ["name", "role"])
def test_a_none_name_or_role_in_a_list_prompt_is_not_a_speaker_called_none(key: str) -> None:
    (message,) = prompter.join([{key: None, "content": "Hi"}], as_messages=True)
    assert message == {"role": "assistant", "content": "Hi"}
    assert prompter.join([{key: None, "content": "Hi"}]) == "Hi"
