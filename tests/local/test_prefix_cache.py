"""Prompt prefixes seen before (modules.local.engines.prefix_cache): reused exactly, never guessed.

The trie is checked on its own (exact block keys, the last prompt token never
cached, the budget), then in the running batch: rows whose prompts open with
cached blocks decode the tokens and logits of their prompts run alone, and the
cache really was used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_kv_slots import _alone, _close
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.engines.kv_slots import Slots
from modules.local.engines.prefix_cache import BLOCK, PrefixCache


def _kv(ids: list[int], layers: int = 2) -> list[tuple[Any, Any]]:
    """Fake keys/values ``[1, 2, len, 4]`` whose column ``i`` holds the token id ``ids[i]`` (and the layer)."""
    import torch

    col = torch.tensor(ids, dtype=torch.float32).view(1, 1, -1, 1).expand(1, 2, -1, 4)
    return [(col + 1000 * layer, -col - 1000 * layer) for layer in range(layers)]


def test_a_prompt_reuses_whole_blocks_and_never_its_last_token() -> None:
    cache = PrefixCache()
    ids = list(range(100, 140))  # 40 tokens: blocks at 0 and 16 (32..39 is not whole)
    assert cache.lookup(ids) == []
    cache.insert(ids, [], _kv(ids), 0)
    assert cache.blocks == 2
    assert len(cache.lookup(ids)) == 2
    # exactly 32 tokens: the second block would leave nothing to compute the first answer token from
    assert len(cache.lookup(ids[:32])) == 1
    assert len(cache.lookup(ids[:33])) == 2
    assert cache.lookup(ids[:16]) == []


def test_one_different_token_in_a_block_ends_the_reuse_there() -> None:
    cache = PrefixCache()
    ids = list(range(100, 150))
    cache.insert(ids, [], _kv(ids), 0)
    other = list(ids)
    other[BLOCK + 5] += 1  # inside the second block
    assert len(cache.lookup(other)) == 1
    other[3] += 1  # inside the first
    assert cache.lookup(other) == []


def test_the_cached_keys_and_values_are_those_of_the_prompt_columns() -> None:
    import torch

    cache = PrefixCache()
    ids = list(range(7, 60))
    other = [i + 500 for i in ids]
    both = [(torch.cat([a[0], b[0]]), torch.cat([a[1], b[1]])) for a, b in zip(_kv(other, 3), _kv(ids, 3), strict=True)]
    cache.insert(ids, [], both, 1)  # ours is row 1
    path = cache.lookup(ids)
    got = cache.keys_values(path, rows=3)
    for layer, (k, v) in enumerate(got):
        assert k.shape == (3, 2, len(path) * BLOCK, 4)
        assert torch.equal(k[2, 0, :, 0], torch.tensor(ids[: len(path) * BLOCK], dtype=torch.float32) + 1000 * layer)
        assert torch.equal(v, -k)


def test_the_cache_keeps_to_its_budget_and_drops_the_least_recently_used() -> None:
    cache = PrefixCache(max_tokens=4 * BLOCK)
    keep = list(range(1000, 1000 + 3 * BLOCK + 1))  # three blocks
    cache.insert(keep, [], _kv(keep), 0)
    for n in range(10):
        cache.lookup(keep)  # in use all along
        other = [n * 100 + i for i in range(2 * BLOCK + 1)]
        cache.insert(other, [], _kv(other), 0)
        assert cache.blocks <= 4
    assert len(cache.lookup(keep)) >= 1  # its opening survived the newer, unused blocks


def test_a_path_extended_later_hangs_below_the_blocks_it_shares() -> None:
    cache = PrefixCache()
    head = list(range(200, 200 + 2 * BLOCK + 1))
    cache.insert(head, [], _kv(head), 0)
    longer = head[:-1] + list(range(500, 540))
    path = cache.lookup(longer)
    assert len(path) == 2
    cache.insert(longer, path, _kv(longer), 0)
    assert len(cache.lookup(longer)) == (len(longer) - 1) // BLOCK
    assert cache.blocks == (len(longer) - 1) // BLOCK


# -- in the running batch -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model(tiny_model_path: Path) -> Any:  # noqa: F811
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_model_path).eval()


SHARED = list(range(40, 80))  # a 40-token opening (a system prompt, say): two whole blocks
PROMPTS = [SHARED + [5, 6, 7], SHARED + list(range(200, 230)), SHARED[:20] + [13, 14], SHARED + [300], [9, 8, 7]]


def test_rows_that_reuse_a_cached_opening_decode_as_alone(model: Any) -> None:
    """The first prompt fills the cache; the others join later, together and alone, and reuse its blocks."""
    import torch

    steps = 40
    expected = {i: _alone(model, p, steps + 20) for i, p in enumerate(PROMPTS)}
    cache = PrefixCache()
    slots = Slots(model, cache)
    who: list[int] = []
    got: dict[int, list[int]] = {i: [] for i in range(len(PROMPTS))}
    logits_ok = True

    def take(first: int, logits: Any) -> None:
        nonlocal logits_ok
        tokens = []
        for row in range(first, first + logits.shape[0]):
            i = who[row]
            n = len(got[i])
            logits_ok &= _close(logits[row - first], expected[i][1][n])
            got[i].append(int(logits[row - first].argmax()))
            tokens.append(got[i][-1])
        slots.set_next(first, tokens)

    with torch.inference_mode():
        # 1 and 2 join together and share one cached block (they run as one pass from there);
        # 3 then reuses both of 0's blocks; 4 shares nothing
        for batch in ([0], [1, 2], [3, 4]):
            first = slots.count
            who += batch
            take(first, slots.prefill([PROMPTS[i] for i in batch]))
            for _ in range(5):
                take(0, slots.step())
        for _ in range(steps):
            take(0, slots.step())
    for i in range(len(PROMPTS)):
        assert got[i] == expected[i][0][: len(got[i])], f"prompt {i}"
    assert logits_ok
    assert cache.hits == BLOCK + BLOCK + 2 * BLOCK


def test_the_batcher_keeps_a_prefix_cache_and_uses_it(tiny_model_path: Path) -> None:  # noqa: F811
    from modules.local.batching import Job
    from modules.local.trainable import TrainableModule

    module = TrainableModule(tiny_model_path, max_batch_size=4, engine_process=False).start()
    try:
        batcher = module._backend.batcher
        first = module.prepare([{"role": "user", "content": "What is the sea?"}], max_new_tokens=4)
        again = module.prepare([{"role": "user", "content": "What is the sky?"}], max_new_tokens=4)
        batcher.run(Job(first, None, None))
        assert batcher.rows.prefixes is not None and batcher.rows.prefixes.hits == 0
        batcher.run(Job(again, None, None))
        assert batcher.rows.prefixes.hits >= BLOCK  # the template's system block, at least
    finally:
        module.stop()


def test_the_cache_can_be_turned_off_in_process_in_the_engine_process_and_on_the_command_line(
    tiny_model_path: Path,  # noqa: F811
) -> None:
    """Where one client must not learn from timing whether another sent the same opening."""
    import argparse

    from modules.errors import ModuleConfigError
    from modules.local.batching import Job
    from modules.local.trainable import TrainableModule
    from modules.server.cli_options import add_engine_options, engine_options

    off = TrainableModule(tiny_model_path, max_batch_size=2, engine_process=False, prefix_cache=False).start()
    try:
        for text in ("What is the sea?", "What is the sky?"):
            off._backend.batcher.run(Job(off.prepare([{"role": "user", "content": text}], max_new_tokens=2), None, None))
        assert off._backend.batcher.rows.prefixes is None
    finally:
        off.stop()
    assert TrainableModule(tiny_model_path, max_batch_size=2, prefix_cache=False)._engine_config().prefix_tokens == 0
    assert TrainableModule(tiny_model_path, max_batch_size=2)._engine_config().prefix_tokens > 0
    with pytest.raises(ModuleConfigError, match="prefix_cache"):
        TrainableModule(tiny_model_path, prefix_cache=1)  # type: ignore[arg-type]
    parser = argparse.ArgumentParser()
    add_engine_options(parser)
    assert engine_options(parser.parse_args([]))["prefix_cache"] is True
    assert engine_options(parser.parse_args(["--no-prefix-cache"]))["prefix_cache"] is False
