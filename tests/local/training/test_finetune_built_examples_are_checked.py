"""Examples built already (dicts of ``input_ids``/``labels``) are checked before training, and not mutated.

Before the fix: labels of another length than their ids were padded with -100 and trained,
silently misaligned; an example without ``attention_mask`` (as many HF pipelines make
them) died mid-run on a bare ``KeyError``; an id outside the vocabulary on a bare
``IndexError`` inside the embedding; an empty example or string ids on torch's own
``RuntimeError``/``ValueError``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from modules.errors import ModuleConfigError
from modules.local.training.loop import LOG_FILE
from prompter import ChatPrompter


@pytest.fixture(scope="module")
def base() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter("Answer briefly.", enable_system=False))


BAD = [
    ([{"input_ids": [1, 2, 3], "labels": [-100, 2]}], "one entry per token"),
    ([{"input_ids": [1, 2, 3], "labels": [-100, 2, 3], "attention_mask": [1, 1]}], "one entry per token"),
    ([{"input_ids": [], "labels": []}], "one entry per token"),
    ([{"input_ids": [1, 2, 10**6], "labels": [-100, 2, 3]}], r"input_ids holds 1000000, outside"),
    ([{"input_ids": [1, 2, 3], "labels": [-100, -1, 3]}], r"labels holds -1, outside"),
    ([{"input_ids": ["a", "b"], "labels": [1, 2]}], "input_ids must be a list of ints"),
    ([{"input_ids": "ab", "labels": [1, 2]}], "input_ids must be a list of ints"),
]


@pytest.mark.parametrize(("data", "match"), BAD, ids=["short-labels", "short-mask", "empty", "id", "label", "str", "text"])
def test_a_malformed_built_example_is_a_typed_error(base: Any, tmp_path: Path, data: Any, match: str) -> None:
    with pytest.raises(ModuleConfigError, match=rf"example 0: .*{match}|example 0: {match}"):
        base.finetune(data, tmp_path / "never", epochs=1, progress=False)
    assert not (tmp_path / "never").exists()


def test_examples_without_attention_mask_train_and_are_not_mutated(base: Any, tmp_path: Path) -> None:
    built = base.training_examples([{"input": "What is 2+2?", "output": "4"}], progress=False)
    bare = [{"input_ids": list(e["input_ids"]), "labels": list(e["labels"])} for e in built]
    before = copy.deepcopy(bare)
    tuned = base.finetune(bare, tmp_path / "bare", epochs=1, progress=False)
    tuned.stop()
    with_mask = base.finetune(list(built), tmp_path / "mask", epochs=1, progress=False)
    with_mask.stop()
    assert bare == before
    losses = [json.loads((tmp_path / n / LOG_FILE).read_text(encoding="utf-8"))["steps"] for n in ("bare", "mask")]
    assert losses[0] == losses[1]  # all ones, as training_example makes the mask
