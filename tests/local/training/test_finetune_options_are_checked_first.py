"""Every ``finetune`` option is checked before any work, as a ``ModuleConfigError`` naming it.

Before the fix: ``epochs=inf`` escaped as a bare ``OverflowError``; ``lr=inf`` trained
(to NaN weights) and saved; ``threads="2"``, ``seed="x"``/``1.5``, ``weight_decay=nan``
and ``lora_target_modules=5`` escaped as bare ``TypeError``/``ValueError``/``RuntimeError``
from torch or peft; ``threads=-3`` was silently 1; ``on_log=5`` failed only after the first
training step; ``max_length`` was checked only when the first example was built (and
never for examples built already); ``lora="yes"`` was taken as True.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from modules.errors import ModuleConfigError
from modules.local.training.loop import TrainOptions
from prompter import ChatPrompter

PAIRS = [{"input": "What is 2+2?", "output": "4"}]

BAD = [
    ({"epochs": float("inf")}, "epochs"),
    ({"lr": float("inf")}, "lr"),
    ({"weight_decay": float("nan")}, "weight_decay"),
    ({"weight_decay": float("inf")}, "weight_decay"),
    ({"threads": "2"}, "threads"),
    ({"threads": 0}, "threads"),
    ({"threads": -3}, "threads"),
    ({"threads": True}, "threads"),
    ({"seed": "x"}, "seed"),
    ({"seed": 1.5}, "seed"),
    ({"seed": True}, "seed"),
    ({"seed": 2**70}, "seed"),
    ({"max_length": 1}, "max_length"),
    ({"max_length": "9"}, "max_length"),
    ({"max_length": True}, "max_length"),
    ({"on_log": 5}, "on_log"),
    ({"lora": True, "lora_target_modules": 5}, "lora_target_modules"),
    ({"lora": True, "lora_target_modules": []}, "lora_target_modules"),
    ({"lora": True, "lora_target_modules": ["q_proj", 1]}, "lora_target_modules"),
    ({"lora": "yes"}, "lora"),
    ({"train_on_history": 1}, "train_on_history"),
    ({"progress": "no"}, "progress"),
]


@pytest.fixture(scope="module")
def base() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter("Answer briefly.", enable_system=False))


@pytest.mark.parametrize(("options", "name"), BAD, ids=[f"{n}-{i}" for i, (_, n) in enumerate(BAD)])
def test_a_bad_option_is_a_typed_error_naming_it_before_any_work(
    base: Any, tmp_path: Path, options: dict[str, Any], name: str
) -> None:
    options = {"progress": False, **options}
    with pytest.raises(ModuleConfigError, match=rf"finetune: {name} must be"):
        base.finetune(PAIRS, tmp_path / "never", **options)
    assert not (tmp_path / "never").exists()


def test_max_length_is_checked_even_for_examples_built_already(base: Any, tmp_path: Path) -> None:
    examples = base.training_examples(PAIRS, progress=False)
    with pytest.raises(ModuleConfigError, match="max_length"):
        base.finetune(list(examples), tmp_path / "never", max_length=0, progress=False)


@pytest.mark.parametrize(
    "options",
    [{"seed": -1}, {"seed": 2**32 - 1}, {"threads": 1}, {"max_length": 2}, {"max_grad_norm": float("inf")},
     {"lora_target_modules": ("q_proj",)}, {"lora_target_modules": None}, {"on_log": print}],  # fmt: skip
    ids=["seed-negative", "seed-max", "threads", "max-length", "no-clipping", "targets-tuple", "targets-none", "log"],
)
def test_good_options_are_accepted(options: dict[str, Any]) -> None:
    TrainOptions.of(options)
