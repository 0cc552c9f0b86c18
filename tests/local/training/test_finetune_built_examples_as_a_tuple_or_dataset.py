"""Examples built already train the same from a list, a tuple or a ``datasets.Dataset`` of them (the HF way to
hold tokenized data, ``Dataset.from_list(examples)``), and a malformed one in a Dataset is checked as in a list.

Before the fix, a tuple or a Dataset of built examples was read as records and refused: "a record needs the
answer under one of output, ...; got keys ['attention_mask', 'input_ids', 'labels']".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modules.errors import ModuleConfigError
from modules.local.training.loop import LOG_FILE
from prompter import ChatPrompter

RECORDS = [{"input": "What is red?", "output": "A colour"}, {"input": "What is 2+2?", "output": "four"}]


@pytest.fixture(scope="module")
def base() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter("Answer briefly.", enable_system=False))


def losses(base: Any, data: Any, out: Path) -> list[float]:
    tuned = base.finetune(data, out, epochs=2, lr=1e-3, progress=False)
    tuned.stop()
    return [step["loss"] for step in json.loads((out / LOG_FILE).read_text(encoding="utf-8"))["steps"]]


def test_a_tuple_and_a_dataset_of_built_examples_train_as_the_list_does(base: Any, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    built = [dict(e) for e in base.training_examples(RECORDS, progress=False)]
    from_list = losses(base, built, tmp_path / "list")
    assert losses(base, tuple(built), tmp_path / "tuple") == from_list
    assert losses(base, datasets.Dataset.from_list(built), tmp_path / "dataset") == from_list


def test_a_malformed_built_example_in_a_dataset_is_a_typed_error(base: Any, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    bad = datasets.Dataset.from_list([{"input_ids": [1, 2, 3], "labels": [-100, 2]}])
    with pytest.raises(ModuleConfigError, match="example 0: .*one entry per token"):
        base.finetune(bad, tmp_path / "never", epochs=1, progress=False)
    assert not (tmp_path / "never").exists()
