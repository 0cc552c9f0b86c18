"""A decoding step hands SDPA its mask ready-made (``[rows, 1, 1, columns]``, bool): transformers rebuilding
it from a 2D padding mask indexed every row and column, about an eighth of a 64-row step on the tiny model.
Exactness is test_batching's (answers bit-identical to ``generate`` alone at 1 to 64 rows); this checks
the mask builder never runs in a step, and the logits equal those of the 2D-mask path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.engines.kv_slots import Slots
from modules.local.engines.sampling import choose_tokens


def _model(path: Path) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=torch.float32).eval()


def _prompts(n: int) -> list[list[int]]:
    return [[5 + i % 7, 17, 23 + i, 9, 31 + (i * 3) % 11][: 3 + i % 3] for i in range(n)]


def test_a_64_row_step_never_runs_transformers_mask_builder(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS

    model = _model(tiny_model_path)
    calls = []
    builder = ALL_MASK_ATTENTION_FUNCTIONS._global_mapping["sdpa"]

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return builder(*args, **kwargs)

    with torch.inference_mode():
        slots = Slots(model, None, packed=False)
        logits = slots.prefill(_prompts(64))
        slots.set_next(0, choose_tokens(logits, []))
        monkeypatch.setitem(ALL_MASK_ATTENTION_FUNCTIONS._global_mapping, "sdpa", counted)
        for _ in range(3):
            slots.set_next(0, choose_tokens(slots.step(), []))
    assert calls == []


def test_the_ready_made_mask_gives_the_logits_the_2d_mask_gives(tiny_model_path: Path) -> None:  # noqa: F811
    import torch

    model = _model(tiny_model_path)
    with torch.inference_mode():
        ours, theirs = Slots(model, None, packed=False), Slots(model, None, packed=False)
        theirs.sdpa_mask = False  # the 2D mask, built by transformers
        for slots in (ours, theirs):
            slots.set_next(0, choose_tokens(slots.prefill(_prompts(40)), []))
        for _ in range(6):
            a, b = ours.step(), theirs.step()
            assert torch.equal(a, b)
            tokens = choose_tokens(a, [])
            ours.set_next(0, tokens)
            theirs.set_next(0, tokens)
