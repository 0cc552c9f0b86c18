"""A label given as a str subclass is learnt as its text: the subclass's own methods never decide what is learnt.

Alpaca's template writes earlier turns differently once an answer follows, so its answer is taken
as data after the inference prompt; there a subclass whose truth value or length lies used to
make the label vanish (only the stop word was learnt).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from modules.local.training.example import IGNORE_INDEX
from prompter import ChatPrompter


class Lying(str):
    """A str whose methods lie about it."""

    def __str__(self) -> str:
        return "HACK"

    def __bool__(self) -> bool:
        return False

    def __len__(self) -> int:
        return 0

    def __add__(self, other: object) -> str:
        return "HACK"

    def strip(self, chars: str | None = None) -> str:
        return "HACK"


@cache
def module(family: str) -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model(family)).prompt(ChatPrompter("Answer briefly.", enable_system=False))


def learnt(m: Any, example: Any) -> str:
    ids = [t for t, label in zip(example["input_ids"], example["labels"]) if label != IGNORE_INDEX]
    return str(m.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))


FAMILIES = {"alpaca": "four</s>", "qwen2.5": "four<|im_end|>", "llama-3.1": "four<|eot_id|>"}
LABELS = [Lying("four"), {"role": "assistant", "content": Lying("four")}]


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("label", LABELS, ids=["text", "message"])
def test_a_str_subclass_label_is_learnt_as_its_text(family: str, label: Any) -> None:
    m = module(family)
    example = m.training_example("What is 2+2?", label=label)
    assert learnt(m, example) == FAMILIES[family]
    assert example == m.training_example("What is 2+2?", label="four")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_str_subclass_answer_in_a_record_is_learnt_as_its_text(family: str) -> None:
    m = module(family)
    (example,) = m.training_examples([{"input": "What is 2+2?", "output": Lying("four")}], progress=False)
    assert learnt(m, example) == FAMILIES[family]
