"""A real SFT run on the tiny qwen2.5 model: the prompter that trains is the prompter that answers, in process and served.

20 question -> answer pairs, a chat prompter with a short instruction and no system
prompt, ``epochs`` and ``lr`` passed in (the batch size is the default). Greedy answers
through the same prompter must reproduce at least 90% of the labels exactly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modules.errors import ModuleConfigError
from modules.local.training.loop import LOG_FILE
from prompter import ChatPrompter

COUNTRIES = ["France", "Japan", "Peru", "Kenya", "Norway", "Chile", "Egypt", "India", "Spain", "Italy",
             "Cuba", "Nepal", "Ghana", "Iran", "Fiji", "Mali", "Oman", "Laos", "Chad", "Togo"]  # fmt: skip
CAPITALS = ["Paris", "Tokyo", "Lima", "Nairobi", "Oslo", "Santiago", "Cairo", "Delhi", "Madrid", "Rome",
            "Havana", "Kathmandu", "Accra", "Tehran", "Suva", "Bamako", "Muscat", "Vientiane", "Ndjamena", "Lome"]  # fmt: skip
PAIRS = [{"input": f"What is the capital of {c}?", "output": a} for c, a in zip(COUNTRIES, CAPITALS)]


@pytest.fixture(scope="module")
def base() -> Any:
    """The tiny qwen2.5 model with a short instruction and no system prompt (not started: finetune loads a copy)."""
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    prompter = ChatPrompter("Answer in one word.", enable_system=False)
    return TrainableModule(cached_tiny_model("qwen2.5"), max_new_tokens=16).prompt(prompter)


@pytest.fixture(scope="module")
def tuned(base: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The model fine-tuned on PAIRS (about 10 s of training on one core)."""
    module = base.finetune(PAIRS, tmp_path_factory.mktemp("tuned"), epochs=40, lr=2e-3, progress=False)
    yield module
    module.stop()


def exact(module: Any) -> int:
    return sum(module(p["input"]) == p["output"] for p in PAIRS)


def test_finetuned_model_answers_exactly_through_the_same_prompter(tuned: Any) -> None:
    assert exact(tuned) >= 18  # >= 90% of 20


def test_the_untrained_model_does_not(base: Any) -> None:
    base.start()
    try:
        assert exact(base) == 0
    finally:
        base.stop()


def test_result_is_a_module_on_the_saved_folder_with_the_same_prompter(base: Any, tuned: Any) -> None:
    from modules.local.trainable import TrainableModule

    assert tuned.prompter is base.prompter
    folder = Path(tuned._backend.path)
    assert (folder / "config.json").is_file() and (folder / "tokenizer.json").is_file()
    again = TrainableModule(folder, max_new_tokens=16).prompt(base.prompter).start()  # loads back by path alone
    try:
        assert [again(p["input"]) for p in PAIRS[:5]] == [tuned(p["input"]) for p in PAIRS[:5]]
    finally:
        again.stop()


def test_the_loss_is_logged_and_falls(tuned: Any) -> None:
    log = json.loads((Path(tuned._backend.path) / LOG_FILE).read_text(encoding="utf-8"))
    losses = [s["loss"] for s in log["steps"]]
    assert len(losses) == 40 * 20  # batch size 1 by default: one step per example per epoch
    assert sum(losses[-20:]) < sum(losses[:20]) / 20


def test_served_back_the_answers_are_the_same(tuned: Any) -> None:
    from modules.online.module import OnlineChatModule

    local = [tuned(p["input"]) for p in PAIRS]
    tuned.start(serve=True)
    online = OnlineChatModule(source="openai-compatible", base_url=tuned.url, model=tuned.name, api_key="x")
    online.prompt(tuned.prompter)
    try:
        assert [online(p["input"], max_tokens=16) for p in PAIRS] == local
    finally:
        tuned.stop()
        tuned.start()


def test_lora_trains_adapters_and_saves_merged_weights(base: Any, tmp_path: Path) -> None:
    pytest.importorskip("peft")
    from safetensors.torch import load_file

    source = Path(base._backend.path) / "model.safetensors"
    before = hashlib.sha256(source.read_bytes()).hexdigest()
    tuned = base.finetune(PAIRS[:4], tmp_path / "lora", epochs=2, lr=1e-2, lora=True, lora_r=4, progress=False)
    try:
        weights = load_file(str(tmp_path / "lora" / "model.safetensors"))
        original = load_file(str(source))
        assert set(weights) == set(original)  # a plain model: no adapter tensors left
        assert any(not (weights[k] == original[k]).all() for k in original)
        assert isinstance(tuned(PAIRS[0]["input"]), str)
    finally:
        tuned.stop()
    assert hashlib.sha256(source.read_bytes()).hexdigest() == before  # the source model is never written


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"epochs": 0}, "epochs must be a positive number"),
        ({"lr": -1}, "lr must be a positive number"),
        ({"batch_size": 0}, "batch_size must be an int >= 1"),
        ({"lr_schedule": "cosine"}, "lr_schedule must be"),
        ({"epoch": 3}, "unknown option 'epoch'"),
    ],
    ids=["epochs", "lr", "batch-size", "schedule", "typo"],
)
def test_bad_options_are_typed_errors_before_any_work(
    base: Any, tmp_path: Path, options: dict[str, Any], match: str
) -> None:
    with pytest.raises(ModuleConfigError, match=match):
        base.finetune(PAIRS, tmp_path / "never", **options)
    assert not (tmp_path / "never").exists()
