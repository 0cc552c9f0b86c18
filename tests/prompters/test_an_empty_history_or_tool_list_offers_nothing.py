"""``history=[]`` is no history and ``tools=[]`` no tools, even for a prompter that takes neither.

LazyLLM 1.4.0's AlpacaPrompter renders ``history=[]`` as if none were given (a module passing an
empty history on every call works); prompter raised HistoryError. Likewise a custom prompter that
takes no tools or no history refused an empty list at construction, while an empty list of tools
is documented to offer and lock nothing.
"""

from __future__ import annotations

import pytest

from prompter import AlpacaPrompter, ChatPrompter, PrompterBase
from prompter.errors import HistoryError, InputTypeError, ToolsError

#: LazyLLM 1.4.0's output for AlpacaPrompter("Do {a}.").generate_prompt({"a": "x"}, history=[]), with the same system prompt
LAZYLLM_TEXT = (
    "You are a helpful assistant.\nBelow is an instruction that describes a task, paired with extra messages such "
    "as input that provides further context if possible. Write a response that appropriately completes the "
    "request.\n\n### Instruction:\nDo x.\n\n\n\n### Response:\n"
)


@pytest.mark.parametrize("empty", [[], ()], ids=["list", "tuple"])
def test_alpaca_renders_an_empty_history_as_no_history(empty: object) -> None:
    p = AlpacaPrompter("Do {a}.")
    assert p.generate_prompt({"a": "x"}, history=empty) == LAZYLLM_TEXT
    for fmt in ("openai", "zhipu"):
        assert p.generate_prompt({"a": "x"}, history=empty, format=fmt) == p.generate_prompt({"a": "x"}, format=fmt)


def test_alpaca_still_refuses_a_history_with_turns() -> None:
    with pytest.raises(HistoryError, match="takes no history"):
        AlpacaPrompter("Do {a}.").generate_prompt({"a": "x"}, history=[["q", "a"]])


class Plain(PrompterBase):
    template = "{system}{instruction}{user}{input}"
    allows_tools = allows_history = False


def test_a_prompter_without_tools_or_history_takes_empty_lists_at_construction() -> None:
    p = Plain("Say hi. ", tools=[], history=[], system="")
    assert p.tools is None
    assert p.generate_prompt("x", tools=[], history=[]) == "Say hi. x"
    with pytest.raises(ToolsError, match="takes no tools"):
        Plain(tools=[{"type": "function", "function": {"name": "f"}}])
    with pytest.raises(HistoryError, match="takes no history"):
        Plain(history=[["q", "a"]])


def test_a_chat_prompters_constructor_history_stays_with_an_empty_call_history() -> None:
    p = ChatPrompter("Hi.", history=[["q", "a"]])
    assert p.generate_prompt("x", history=[]) == p.generate_prompt("x")


def test_a_message_given_to_alpaca_names_a_remedy_that_works() -> None:
    with pytest.raises(InputTypeError) as err:
        AlpacaPrompter("Summarise.").generate_prompt({"role": "user", "content": "text"})
    assert "AlpacaPrompter has no user turn for messages" in str(err.value)
    assert "pass the text as a str" in str(err.value)
