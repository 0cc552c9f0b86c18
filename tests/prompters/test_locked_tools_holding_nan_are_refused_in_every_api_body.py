"""Tools locked at construction that hold NaN or Infinity are refused in an API body, as call-time tools are.

Every API refuses a body holding NaN (it is no JSON value). The text of a local model may carry it, as
transformers writes it; an API body never: the OpenAI body of the common call (the compiled fast path)
checked nothing, so a prompter constructed with such tools sent them.
"""

from __future__ import annotations

import math

import pytest

from prompter import ChatPrompter
from prompter.errors import ToolsError


def tools(value: float) -> list[dict[str, object]]:
    schema = {"type": "object", "properties": {"x": {"type": "number", "default": value}}}
    return [{"type": "function", "function": {"name": "f", "parameters": schema}}]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("call", [{"format": "openai"}, {"return_dict": True}, {"format": "anthropic"}],
                         ids=["openai", "return_dict", "anthropic"])
def test_locked_tools_holding_nan_are_a_tools_error_in_an_api_body(value: float, call: dict[str, object]) -> None:
    p = ChatPrompter("Use {a}.", tools=tools(value))
    for user_input in ({"a": "x"}, {"a": "x", "input": "q"}):
        with pytest.raises(ToolsError, match="not a JSON value"):
            p.generate_prompt(user_input, **call)  # type: ignore[arg-type]
    with pytest.raises(ToolsError, match="not a JSON value"):
        ChatPrompter("Hi.", tools=tools(value)).generate_prompt("q", history=[["a", "b"]], **call)  # type: ignore[arg-type]


def test_locked_and_call_time_tools_holding_nan_give_the_same_answer() -> None:
    locked = ChatPrompter("Hi.", tools=tools(math.nan))
    free = ChatPrompter("Hi.")
    for fmt in ("openai", "gemini"):
        with pytest.raises(ToolsError) as at_call:
            free.generate_prompt("q", tools=tools(math.nan), format=fmt)  # type: ignore[arg-type]
        with pytest.raises(ToolsError) as at_construction:
            locked.generate_prompt("q", format=fmt)  # type: ignore[arg-type]
        assert str(at_construction.value) == str(at_call.value)
    # the text of a local model carries them, as a chat template's tojson writes them
    assert '"default": NaN' in locked.generate_prompt("q")


def test_locked_tools_without_nan_still_take_the_common_path() -> None:
    p = ChatPrompter("Hi.", tools=tools(1.5))
    assert p._fast is not None
    assert p.generate_prompt("q", format="openai")["tools"] == tools(1.5)
