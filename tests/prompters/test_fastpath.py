"""The compiled common call gives exactly what the general path gives, or declines."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prompter import AlpacaPrompter, ChatPrompter, EmptyPrompter, PrompterBase
from prompter.formats.model_format import GENERIC
from prompter.render.openai import render_openai
from prompter.render.text import render_layout

TEXT = st.text(max_size=12) | st.sampled_from(["{input}", "{a}", "{{", "<|Human|>:", "\n", "role"])
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
HISTORY = st.none() | st.lists(
    st.one_of(st.tuples(TEXT, TEXT).map(list), st.just({"role": "user", "content": "x"}), st.just(["a", 1])),
    max_size=4,
)
INSTRUCTIONS = st.sampled_from(
    [None, "Plain.", "Fill {a}.", "Fill {a} and {b}.", {"system": "S {a}", "user": "U {b}: "}, {"user": "Q: "},
     'JSON {"k": 1} {input}']
)
KEYS = st.sampled_from(["a", "b", "input", "role", "other"])
INPUTS = st.one_of(
    TEXT,
    st.integers(),
    st.dictionaries(KEYS, st.one_of(TEXT, st.integers(), st.none()), max_size=4),
    st.just({"role": "user", "content": "hi"}),
)


def general(p: PrompterBase, input: Any, history: Any, openai: bool) -> Any:
    conv = p.build(input, history)
    return render_openai(conv) if openai else render_layout(type(p)._layout, conv, GENERIC)


@settings(max_examples=2000, deadline=None)
@given(
    kind=st.sampled_from([ChatPrompter, AlpacaPrompter]),
    instruction=INSTRUCTIONS,
    extra_keys=st.sampled_from([None, "ctx", ["b"]]),
    tools=st.booleans(),
    user_input=INPUTS,
    history=HISTORY,
    openai=st.booleans(),
)
def test_fast_path_equals_general_path(
    kind: type[PrompterBase], instruction: Any, extra_keys: Any, tools: bool, user_input: Any, history: Any,
    openai: bool,
) -> None:
    p = kind(instruction, extra_keys, tools=TOOLS if tools else None)
    assert p._fast is not None
    try:
        expected = general(p, user_input, history, openai)
    except Exception as general_error:
        with pytest.raises(type(general_error)) as fast_error:
            p.generate_prompt(user_input, history=history, return_dict=openai)
        assert str(fast_error.value) == str(general_error)
        return
    assert p.generate_prompt(user_input, history=history, return_dict=openai) == expected


def test_fast_path_is_not_compiled_where_it_does_not_apply() -> None:
    assert EmptyPrompter()._fast is None  # it renders text its own way
    assert ChatPrompter("Hi.", history=[["q", "a"]])._fast is None  # a constructor history

    class Hooked(ChatPrompter):
        def preprocess(self, input: Any) -> Any:
            return input

    assert Hooked("Hi.")._fast is None
