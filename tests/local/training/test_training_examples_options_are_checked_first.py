"""``training_examples`` and ``training_example`` check their options before any work, as typed errors.

Before the fix: an unknown option (``epochs=3``, meant for ``finetune``) escaped as a bare
``TypeError``; ``progress="no"`` and ``train_on_history="yes"`` (or ``"no"``) were taken as True;
``max_length="9"`` was found only when the first record was built, and named that record.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from modules.local.training.example import TrainingExampleError
from prompter import ChatPrompter

PAIRS = [{"input": "What is 2+2?", "output": "4"}]


@cache
def module() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter("Answer briefly.", enable_system=False))


BAD = [
    ({"epochs": 3}, r"unknown option 'epochs'"),
    ({"progress": "no"}, r"^progress: expected True or False"),
    ({"train_on_history": "yes"}, r"^train_on_history: expected True or False"),
    ({"max_length": "9"}, r"^max_length: expected an int >= 2"),
    ({"max_length": True}, r"^max_length: expected an int >= 2"),
]


@pytest.mark.parametrize(("options", "match"), BAD, ids=["unknown", "progress", "history", "length-str", "length-bool"])
def test_a_bad_option_is_a_typed_error_before_any_record_is_read(options: dict[str, Any], match: str) -> None:
    with pytest.raises(TrainingExampleError, match=match):
        module().training_examples("/nonexistent/never-read.jsonl", **options)


def test_training_example_takes_train_on_history_as_a_bool_only() -> None:
    with pytest.raises(TrainingExampleError, match="train_on_history: expected True or False, got 'no'"):
        module().training_example("q", label="a", train_on_history="no")
