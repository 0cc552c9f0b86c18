"""Metadata columns beside the data (``id``, ``source``, Alpaca copies' ``text``) are ignored when the input
is found by name, and the example is exactly the one without them; an input that cannot be told apart
from the other keys is a typed error naming the keys and the remedy.

Before the fix, ``{"id": 1, "instruction": ..., "output": ...}`` (and every question/answer record with
an extra column, from a list, a JSONL file or a ``datasets.Dataset``) was refused by the prompter, while
the same column beside ``messages`` was silently dropped.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from modules.local.training.example import TrainingExampleError
from prompter import ChatPrompter

META = {"id": 7, "source": "web", "text": "### Instruction: pre-formatted copy"}


@cache
def module(instruction: str | None = "Answer briefly.") -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter(instruction, enable_system=False))


CLEAN = [
    {"instruction": "Name a colour.", "input": "Warm ones only.", "output": "Red"},
    {"instruction": "Name a colour.", "output": "Red"},
    {"input": "Name a colour.", "output": "Red"},
    {"question": "Name a colour.", "answer": "Red"},
    {"prompt": "Name a colour.", "completion": "Red"},
    {"query": "Name a colour.", "response": "Red"},
    {"messages": [{"role": "user", "content": "Name a colour."}, {"role": "assistant", "content": "Red"}]},
]
IDS = ["alpaca", "alpaca-no-input", "input", "question", "prompt-completion", "query", "chat"]


@pytest.mark.parametrize("record", CLEAN, ids=IDS)
def test_metadata_columns_are_ignored_and_change_nothing(record: dict[str, Any]) -> None:
    m = module()
    with_meta = {**META, **record}
    before = copy.deepcopy(with_meta)
    [plain] = m.training_examples([record], progress=False)
    [tagged] = m.training_examples([with_meta], progress=False)
    assert tagged == plain
    assert with_meta == before


def test_metadata_columns_of_a_jsonl_file_and_a_dataset_are_ignored(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    m = module()
    rows = [{"id": i, "source": "web", **CLEAN[0]} for i in range(3)]
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    expected = m.training_examples([CLEAN[0]] * 3, progress=False)
    assert m.training_examples(data, progress=False) == expected
    assert m.training_examples(datasets.Dataset.from_list(rows), progress=False) == expected


def test_metadata_beside_the_prompters_slots_is_ignored() -> None:
    m = module("Answer about {topic}.")
    [plain] = m.training_examples([{"topic": "cats", "input": "Why purr?", "output": "Joy."}], progress=False)
    [tagged] = m.training_examples([{"topic": "cats", "input": "Why purr?", "output": "Joy.", "id": 3}], progress=False)
    assert tagged == plain
    assert tagged["input_ids"][: tagged.prompt_length] == list(
        m.build_request({"topic": "cats", "input": "Why purr?"}).input_ids
    )


@pytest.mark.parametrize(
    "record",
    [{"id": 1, "text": "Name a colour.", "output": "Red"}, {"instruction": "a", "question": "b", "output": "Red"}],
    ids=["unnamed-input", "two-named-inputs"],
)
def test_an_input_that_cannot_be_told_from_the_other_keys_is_a_typed_error(record: dict[str, Any]) -> None:
    with pytest.raises(TrainingExampleError, match=r"record 1: cannot tell which of the keys .* holds the input"):
        module().training_examples([CLEAN[0], record], progress=False)


def test_the_keys_left_out_are_named_once(caplog: pytest.LogCaptureFixture) -> None:
    # a key that was meant as data (a "context" the prompter has no slot for) is not lost without a word
    records = [{**META, **CLEAN[0]}, {"question": "Why?", "context": "Cats purr.", "answer": "Joy"}, {**META, **CLEAN[-1]}]
    with caplog.at_level("WARNING", logger="modules.local.training.data"):
        module().training_examples(records, progress=False)
    assert caplog.text.count("keys left out of every prompt, as metadata: context, id, source, text") == 1
