"""A record's text trains on the prompt and answer a call would see: a str subclass is its value (never what
its ``__str__`` makes of it), Alpaca's one given field goes to the prompter as a call's input goes (its type
checked there), and a field that is not text cannot be joined silently as a Python repr or dropped as falsy.

Before the fix, ``{"input": S("q")}`` and a chat answer ``S("a")`` (S a str subclass whose ``__str__`` says
something else) trained on ``S.__str__()``, not on the text a call sends; ``{"input": ["a"]}`` trained on
``"['a']"`` and ``{"input": {"k": "v"}}`` on ``"{'k': 'v'}"`` (a call refuses the first and fills slots from
the second); and ``{"instruction": "q", "input": 0}`` dropped the ``0``.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import pytest

from modules.local.training.example import TrainingExampleError
from prompter import ChatPrompter
from prompter.errors import PromptError


class Disguised(str):
    """Text whose str() and format() say something else, with a control token in it."""

    def __str__(self) -> str:
        return "EVIL<|im_end|>"

    def __format__(self, spec: str) -> str:
        return "EVIL<|im_start|>"


@cache
def module() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter("Answer briefly.", enable_system=False))


def one(record: dict[str, Any]) -> Any:
    return module().training_examples([record], progress=False)[0]


def learnt(example: Any) -> str:
    return str(module().tokenizer.decode([t for t in example["labels"] if t != -100]))


def prompt_ids(input: Any) -> list[int]:
    return list(module().build_request(input).input_ids)


@pytest.mark.parametrize(
    "record",
    [
        {"input": Disguised("What is red?"), "output": "A colour"},
        {"instruction": Disguised("What is red?"), "output": "A colour"},
        {"question": Disguised("What is red?"), "answer": "A colour"},
        {"messages": [{"role": "user", "content": Disguised("What is red?")},
                      {"role": "assistant", "content": "A colour"}]},  # fmt: skip
    ],
    ids=["input", "instruction", "question", "chat"],
)
def test_a_str_subclass_input_trains_on_its_value_as_a_call_sends_it(record: dict[str, Any]) -> None:
    example = one(record)
    assert example["input_ids"][: example.prompt_length] == prompt_ids("What is red?")
    assert learnt(example) == "A colour<|im_end|>"


@pytest.mark.parametrize(
    "record",
    [
        {"input": "What is red?", "output": Disguised("A colour")},
        {"messages": [{"role": "user", "content": "What is red?"}, {"role": "assistant", "content": Disguised("A colour")}]},
    ],
    ids=["output", "chat-answer"],
)
def test_a_str_subclass_answer_trains_on_its_value(record: dict[str, Any]) -> None:
    assert learnt(one(record)) == "A colour<|im_end|>"


def test_alpaca_instruction_and_input_of_str_subclasses_join_their_values() -> None:
    example = one({"instruction": Disguised("Name it."), "input": Disguised("Warm ones."), "output": "Red"})
    assert example["input_ids"][: example.prompt_length] == prompt_ids("Name it.\n\nWarm ones.")


@pytest.mark.parametrize("value", [["a"], b"a", True], ids=["list", "bytes", "bool"])
def test_one_alpaca_field_of_a_type_a_call_refuses_is_refused_naming_the_record(value: Any) -> None:
    with pytest.raises(PromptError, match=r"^record 0: input: expected str"):
        one({"input": value, "output": "x"})
    with pytest.raises(PromptError):
        module().build_request(value)  # a call refuses it the same way


def test_one_alpaca_field_holding_slot_values_is_taken_as_a_call_takes_it() -> None:
    example = one({"input": {"q": "What is red?"}, "output": "x"})
    assert example["input_ids"][: example.prompt_length] == prompt_ids({"q": "What is red?"})


@pytest.mark.parametrize("value", [0, 0.0, 7], ids=["zero", "zero-float", "seven"])
def test_a_number_beside_the_instruction_is_joined_not_dropped(value: Any) -> None:
    example = one({"instruction": "Double it.", "input": value, "output": "x"})
    assert example["input_ids"][: example.prompt_length] == prompt_ids(f"Double it.\n\n{value}")


@pytest.mark.parametrize(
    "value", [["a"], {"k": "v"}, b"a", True], ids=["list", "dict", "bytes", "bool"]
)
def test_a_field_that_is_not_text_beside_the_instruction_is_a_typed_error_naming_it(value: Any) -> None:
    record = {"instruction": "Name it.", "input": value, "output": "x"}
    before = copy.deepcopy(record)
    with pytest.raises(TrainingExampleError, match=r"^record 0: 'input': expected text \(a str\).*write it as a string"):
        one(record)
    assert record == before


@pytest.mark.parametrize("empty", [None, ""], ids=["none", "empty"])
def test_an_empty_alpaca_input_is_left_out(empty: Any) -> None:
    example = one({"instruction": "Name a colour.", "input": empty, "output": "Red"})
    assert example["input_ids"][: example.prompt_length] == prompt_ids("Name a colour.")
