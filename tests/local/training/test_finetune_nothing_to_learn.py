"""``finetune`` on data in which no token is learnt is a typed error, not a "fine-tuned" copy of the source.

Before the fix, ``max_length`` shorter than every prompt (or built examples whose labels are all
-100) trained every step at loss 0.0, saved the unchanged weights as the tuned model and returned
it, with only a log line about truncation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from modules.errors import ModuleConfigError
from prompter import ChatPrompter

PAIRS = [{"input": f"What is {n} plus one?", "output": str(n + 1)} for n in range(3)]


@pytest.fixture(scope="module")
def base() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter("Answer briefly.", enable_system=False))


def test_a_max_length_that_cuts_every_answer_off_is_a_typed_error_naming_it(base: Any, tmp_path: Path) -> None:
    with pytest.raises(ModuleConfigError, match=r"no token of data is learnt.*max_length=5"):
        base.finetune(PAIRS, tmp_path / "out", max_length=5, epochs=1, progress=False)
    assert not (tmp_path / "out" / "config.json").exists()


def test_built_examples_with_every_label_masked_are_a_typed_error(base: Any, tmp_path: Path) -> None:
    examples = [{"input_ids": [1, 2, 3], "labels": [-100, -100, -100]}, {"input_ids": [4, 5], "labels": [4, -100]}]
    with pytest.raises(ModuleConfigError, match="no token of data is learnt"):
        base.finetune(examples, tmp_path / "out", epochs=1, progress=False)


def test_one_learnt_token_is_enough_to_train(base: Any, tmp_path: Path) -> None:
    examples = [{"input_ids": [1, 2, 3], "labels": [-100, -100, 3]}]
    tuned = base.finetune(examples, tmp_path / "out", epochs=1, progress=False)
    try:
        assert (tmp_path / "out" / "config.json").exists()
    finally:
        tuned.stop()
