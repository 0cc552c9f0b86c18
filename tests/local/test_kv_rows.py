"""The running batch's KV cache (modules.local.engines.kv_rows): a decoding step appends in place.

``DynamicLayer.update`` concatenates, copying every row's whole cache at each
step (quadratic in the answer's length, and a large share of a 64-row step).
The batch's layers write each step's column into spare room instead; the
values the model reads are unchanged (the bit-identity tests in
``test_batching.py`` hold the answers), so these tests watch the storage.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.engines.kv_rows import Rows


@pytest.fixture(scope="module")
def model(tiny_model_path: Path) -> object:  # noqa: F811
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_model_path).eval()


def _storages(rows: Rows, steps: int) -> set[int]:
    import torch

    seen = set()
    with torch.inference_mode():
        for _ in range(steps):
            rows.step()
            seen.add(rows.cache.layers[0].keys.untyped_storage().data_ptr())
    return seen


def test_a_batch_step_appends_into_spare_room_instead_of_copying_the_cache(model: object) -> None:
    import torch

    rows = Rows(model)
    with torch.inference_mode():
        rows.prefill([[5, 6, 7], [8, 9, 10, 11, 12], [13]])
    steps = 40
    storages = _storages(rows, steps)
    assert len(storages) <= 2, f"{len(storages)} cache copies in {steps} steps"
    width = rows.mask.shape[1]
    assert rows.cache.layers[0].keys.shape[2] == width  # the view is exactly as wide as the mask


def test_rows_kept_or_cut_out_start_a_new_buffer_and_keep_appending_in_place(model: object) -> None:
    import torch

    rows = Rows(model)
    with torch.inference_mode():
        rows.prefill([[5, 6, 7], [8, 9, 10, 11, 12], [13, 14]])
        _storages(rows, 3)
        saved = rows.take(1)
        rows.keep([0, 2])
        rows.restore([saved])
    assert rows.count == 3
    assert len(_storages(rows, 30)) <= 2
    assert rows.cache.layers[0].keys.shape[2] == rows.mask.shape[1]
