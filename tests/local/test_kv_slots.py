"""The running batch as slots (modules.local.engines.kv_slots): rows join and leave without copying the others.

Two kinds of checks: the numbers (each row's logits, step after step, through
joins, leaves, turns aside and growth of the buffers, equal those of its
prompt run alone, and its greedy tokens are the same), and the storage (a
step, a join or a leave that fits the buffers writes into them in place,
instead of rebuilding every row's cache as the padded batch did).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.engines.kv_rows import cache_keyword
from modules.local.engines.kv_slots import Slots


@pytest.fixture(scope="module")
def model(tiny_model_path: Path) -> Any:  # noqa: F811
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_model_path).eval()


def _alone(model: Any, ids: list[int], steps: int) -> tuple[list[int], list[Any]]:
    """Greedy tokens and last logits of *ids* run alone, one token at a time (a plain DynamicCache)."""
    import torch
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    with torch.inference_mode():
        out = model(input_ids=torch.tensor([ids]), **{cache_keyword(model): cache}, use_cache=True)
        logits = [out.logits[0, -1].float()]
        tokens = [int(logits[-1].argmax())]
        for _ in range(steps):
            out = model(input_ids=torch.tensor([[tokens[-1]]]), **{cache_keyword(model): cache}, use_cache=True)
            logits.append(out.logits[0, -1].float())
            tokens.append(int(logits[-1].argmax()))
    return tokens, logits


def _close(got: Any, want: Any) -> bool:
    """Equal up to float32 rounding: batched shapes sum in another order (the tokens are compared exactly)."""
    return bool((got - want).abs().max() <= 5e-5 * max(1.0, float(want.abs().max())))


PROMPTS = [[5, 6, 7], list(range(20, 61)), [13, 14], list(range(100, 109)), [300]]


def test_rows_decode_as_alone_through_joins_leaves_turns_aside_and_growth(model: Any) -> None:
    """Rows join at different steps, two leave, one steps aside and comes back; lengths pass 128 (growth)."""
    import torch

    steps = 150
    expected = {i: _alone(model, p, steps) for i, p in enumerate(PROMPTS)}
    slots = Slots(model)
    who: list[int] = []  # the prompt each row decodes
    done: dict[int, list[int]] = {i: [] for i in range(len(PROMPTS))}
    aside: Any = None

    def join(ids: list[int]) -> None:
        first = slots.count
        logits = slots.prefill([PROMPTS[i] for i in ids])
        for row, i in enumerate(ids):
            assert _close(logits[row], expected[i][1][0])
            done[i].append(int(logits[row].argmax()))
        slots.set_next(first, [done[i][-1] for i in ids])
        who.extend(ids)

    with torch.inference_mode():
        join([0, 1])
        for step in range(steps):
            if step == 3:
                join([2, 3])
            if step == 10:  # rows of prompts 0 and 2 leave; the last rows move into their slots
                order = slots.remove({who.index(0), who.index(2)})
                who[:] = [who[i] for i in order]
            if step == 12:
                join([4])
            if step == 20:
                index = who.index(1)
                aside = slots.take(index)
                order = slots.remove({index})
                who[:] = [who[i] for i in order]
            if step == 30:
                first = slots.count
                slots.restore([aside])
                who.append(1)
                assert slots.next_tokens[first, 0] == done[1][-1]
            logits = slots.step()
            for row, i in enumerate(who):
                k = len(done[i])
                assert _close(logits[row], expected[i][1][k]), (step, i, k)
                done[i].append(int(logits[row].argmax()))
            slots.set_next(0, [done[i][-1] for i in who])
    for i, tokens in done.items():
        assert tokens == expected[i][0][: len(tokens)], i
    assert max(slots.lengths) > 128  # the buffers grew past their first length


def test_steps_joins_and_leaves_that_fit_write_in_place(model: Any) -> None:
    import torch

    slots = Slots(model)
    with torch.inference_mode():
        slots.prefill([[5, 6, 7], [8, 9, 10, 11, 12], [13]])
        slots.set_next(0, [1, 2, 3])
        storage = {slots.keys[0].untyped_storage().data_ptr()}
        for step in range(40):
            if step == 5:
                slots.prefill([[40, 41], [42]])
                slots.set_next(3, [4, 5])
            if step == 9:
                assert slots.remove({0, 3}) == [4, 1, 2]  # the last row moved into the first hole
            slots.step()
            storage.add(slots.keys[0].untyped_storage().data_ptr())
    assert len(storage) == 1  # no rebuilt cache: within capacity everything was written in place
    assert slots.count == 3 and slots.lengths == [1 + 35, 5 + 40, 1 + 40]  # [42] joined before step 5


def test_removing_every_row_then_joining_again_starts_clean(model: Any) -> None:
    import torch

    slots = Slots(model)
    with torch.inference_mode():
        slots.prefill([[5, 6, 7], [8, 9]])
        slots.step()
        assert slots.remove({0, 1}) == []
        assert slots.count == 0 and slots.lengths == []
        logits = slots.prefill([[300]])
    expected = _alone(model, [300], 0)[1][0]
    assert _close(logits[0], expected)


def test_a_wider_batch_does_not_lengthen_every_rows_buffer(model: Any) -> None:
    """Rows arriving a few at a time grow the buffers' rows, not their length.

    Growing both together on every widening gave a batch of short prompts buffers
    ten times longer than any row (128 columns became 972 after five widenings), so
    each step's attention walked rows far apart in memory.
    """
    import torch

    slots = Slots(model, packed=False)
    with torch.inference_mode():
        for i in range(40):  # one row at a time: the rows' capacity grows 8, 12, 18, 27, 40
            slots.prefill([[5 + i % 7, 6, 7, 8]])
            slots.step()
    rows, length = slots.keys[0].shape[0], slots.keys[0].shape[2]
    assert rows >= 40
    assert length == 128, f"40 rows of at most {max(slots.lengths)} tokens got buffers {length} columns long"
