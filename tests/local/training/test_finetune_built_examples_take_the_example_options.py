"""``finetune`` on examples built already honours ``max_length`` and refuses ``train_on_history``.

Before the fix both options were silently left out when ``data`` was a list of built examples:
``max_length`` (documented "as for ``training_examples``": cut examples to this many tokens)
did not cut them, so a caller bounding memory trained on the whole length; and
``train_on_history=True`` trained on the examples' own labels without a word.
"""

from __future__ import annotations

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


def losses(folder: Path) -> list[float]:
    return [step["loss"] for step in json.loads((folder / LOG_FILE).read_text(encoding="utf-8"))["steps"]]


def test_max_length_cuts_built_examples_as_training_examples_does(base: Any, tmp_path: Path) -> None:
    record = [{"input": "What is the capital of Peru?", "output": "Lima is the capital"}]
    built = [dict(e) for e in base.training_examples(record, progress=False)]
    keep = base.training_examples(record, progress=False)[0].prompt_length + 2  # two answer tokens, not all
    cut = [dict(e) for e in base.training_examples(record, max_length=keep, progress=False)]
    assert len(cut[0]["input_ids"]) == keep < len(built[0]["input_ids"])
    base.finetune(built, tmp_path / "given", epochs=1, max_length=keep, progress=False).stop()
    base.finetune(cut, tmp_path / "cut", epochs=1, progress=False).stop()
    base.finetune(record, tmp_path / "records", epochs=1, max_length=keep, progress=False).stop()
    assert losses(tmp_path / "given") == losses(tmp_path / "cut") == losses(tmp_path / "records")
    assert len(built[0]["input_ids"]) > keep  # the caller's examples are not cut in place


def test_train_on_history_with_built_examples_is_a_typed_error_before_any_work(base: Any, tmp_path: Path) -> None:
    built = list(base.training_examples([{"input": "q", "output": "a", "history": [["q0", "a0"]]}], progress=False))
    with pytest.raises(ModuleConfigError, match=r"train_on_history=True .* built already.*training_examples"):
        base.finetune(built, tmp_path / "never", epochs=1, train_on_history=True, progress=False)
    assert not (tmp_path / "never").exists()
