"""The compiled common call gives exactly what the general path gives."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from prompter import ChatPrompter, EmptyPrompter
from prompter.model_format import GENERIC
from prompter.render.openai import render_openai
from prompter.render.text import render_layout

TEXT = st.text(max_size=12) | st.sampled_from(["{input}", "{{", "<|Human|>:", "\n"])
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
HISTORY = st.none() | st.lists(st.one_of(st.tuples(TEXT, TEXT).map(list), st.just({"role": "user", "content": "x"}),
                                         st.just(["a", 1])), max_size=4)


@settings(max_examples=2000, deadline=None)
@given(
    instruction=st.none() | TEXT.map(lambda t: t.replace("{", "(")) | st.just({"system": "S", "user": "U: "}),
    tools=st.booleans(),
    enable_system=st.booleans(),
    user_input=TEXT,
    history=HISTORY,
)
def test_fast_path_equals_general_path(
    instruction: Any, tools: bool, enable_system: bool, user_input: str, history: Any
) -> None:
    p = ChatPrompter(instruction, tools=TOOLS if tools else None, enable_system=enable_system)
    assert p._fast is not None
    try:
        conv = p.build(user_input, history)
    except Exception as general_error:
        try:
            p.generate_prompt(user_input, history=history)
        except Exception as fast_error:
            assert type(fast_error) is type(general_error)
            assert str(fast_error) == str(general_error)
        else:
            raise AssertionError("the fast path accepted what the general path rejects") from None
        return
    assert p.generate_prompt(user_input, history=history) == render_layout(type(p)._layout, conv, GENERIC)
    assert p.generate_prompt(user_input, history=history, return_dict=True) == render_openai(conv)


def test_fast_path_is_not_used_where_it_does_not_apply() -> None:
    assert ChatPrompter("About {topic}.")._fast is None
    assert EmptyPrompter()._fast is None  # it renders text its own way
    assert ChatPrompter("Hi.", history=[["q", "a"]])._fast is None
