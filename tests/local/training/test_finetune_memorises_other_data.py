"""Fine-tuning memorises small data of other shapes, not only the capitals of test_finetune.py.

Each data set is 20 question -> answer pairs through a chat prompter with a short
instruction and no system prompt, ``epochs=40, lr=2e-3`` passed in, two data orders
(``seed``). Answers that differ by one digit (sums), by the one word that differs in
the question (opposites) or by many tokens (capitals) must all come back exactly, at
least 18 of 20 (90%), through the same prompter.

Before the tiny model's weights were drawn with a spread of 0.2 (build 1 drew them
with 0.5), its attention saturated: the same loop reached only 9-18 of 20 here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prompter import ChatPrompter

OPPOSITES = [("hot", "cold"), ("up", "down"), ("big", "small"), ("fast", "slow"), ("light", "dark"),
             ("happy", "sad"), ("open", "closed"), ("early", "late"), ("full", "empty"), ("hard", "soft"),
             ("rich", "poor"), ("young", "old"), ("wet", "dry"), ("loud", "quiet"), ("thick", "thin"),
             ("high", "low"), ("strong", "weak"), ("clean", "dirty"), ("sweet", "sour"), ("north", "south")]  # fmt: skip
CAPITALS = [("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Spain", "Madrid"), ("Germany", "Berlin"),
            ("Egypt", "Cairo"), ("Peru", "Lima"), ("Chile", "Santiago"), ("Kenya", "Nairobi"), ("Norway", "Oslo"),
            ("Cuba", "Havana"), ("Greece", "Athens"), ("Poland", "Warsaw"), ("Ireland", "Dublin"),
            ("Austria", "Vienna"), ("Russia", "Moscow"), ("China", "Beijing"), ("India", "New Delhi"),
            ("Canada", "Ottawa"), ("Brazil", "Brasilia")]  # fmt: skip
DATA = {
    "sums": [{"input": f"What is {i} plus {i}?", "output": str(2 * i)} for i in range(1, 21)],
    "opposites": [{"input": f"What is the opposite of {a}?", "output": b} for a, b in OPPOSITES],
    "capitals": [{"input": f"What is the capital of {a}?", "output": b} for a, b in CAPITALS],
}


@pytest.fixture(scope="module")
def base() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    prompter = ChatPrompter("Reply with one word.", enable_system=False)
    return TrainableModule(cached_tiny_model("qwen2.5"), max_new_tokens=16).prompt(prompter)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(DATA))
def test_twenty_pairs_come_back_exactly(base: Any, tmp_path: Path, name: str, seed: int) -> None:
    pairs = DATA[name]
    tuned = base.finetune(pairs, tmp_path / "tuned", epochs=40, lr=2e-3, seed=seed, progress=False)
    try:
        answers = [tuned(p["input"]) for p in pairs]
    finally:
        tuned.stop()
    wrong = [(p["output"], a) for p, a in zip(pairs, answers, strict=True) if a != p["output"]]
    assert len(wrong) <= 2, f"{name}, seed {seed}: {20 - len(wrong)} of 20 exact; (wanted, got): {wrong}"
