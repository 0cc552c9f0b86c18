"""A seed past the signed 64-bit range never draws as the seed it folds onto; seeds in it draw as they did.

``TrainableModule`` takes any int as ``seed`` (Python's ints have no width; the
server refuses one outside OpenAI's range). Sampling folded it modulo 2**63, so
``seed=2**63`` drew the very tokens of ``seed=0``, and ``-2**63 - 1`` those of
``2**63 - 1``. A seed in the range still seeds torch's generator as torch reads it.
"""

from __future__ import annotations

import pytest
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.engines.sampling import generator_for
from modules.local.request import GenerationOptions
from modules.local.trainable import TrainableModule

PROMPT = "Tell me about cats"
FOLDED = [(2**63, 0), (2**63 + 5, 5), (2**64, 0), (-(2**63) - 1, 2**63 - 1), (2**80 + 7, 7)]


def _sample(module: TrainableModule, seed: int) -> str:
    return str(module(PROMPT, temperature=1.5, seed=seed, max_new_tokens=16))


@pytest.mark.parametrize(("seed", "folded_onto"), FOLDED, ids=[f"{s}|{f}" for s, f in FOLDED])
def test_a_seed_past_int64_does_not_draw_as_the_seed_it_used_to_fold_onto(
    started_module: TrainableModule,  # noqa: F811
    seed: int,
    folded_onto: int,
) -> None:
    assert _sample(started_module, seed) != _sample(started_module, folded_onto)
    assert _sample(started_module, seed) == _sample(started_module, seed)


IN_RANGE = [0, 1, 7, 42, 2**31, 2**32 - 1, 2**32, 2**62 + 3, 2**63 - 1, -1, -42, -(2**63)]


@pytest.mark.parametrize("seed", IN_RANGE, ids=[str(s) for s in IN_RANGE])
def test_a_seed_in_int64_draws_as_torch_seeded_with_it_does(seed: int) -> None:
    import torch

    ours = generator_for(GenerationOptions(temperature=1.0, seed=seed))
    theirs = torch.Generator().manual_seed(seed)
    assert torch.equal(torch.rand(64, generator=ours), torch.rand(64, generator=theirs))


def _first_draws(seed: int) -> list[float]:
    import torch

    draws: list[float] = torch.rand(8, generator=generator_for(GenerationOptions(temperature=1.0, seed=seed))).tolist()
    return draws


def test_a_huge_seed_draws_repeatably_and_apart_from_its_neighbours() -> None:
    seed = 10**5000  # past Python's integer-string limit: str() of it is refused
    assert _first_draws(seed) == _first_draws(seed)
    assert len({tuple(_first_draws(s)) for s in (seed, seed + 1, -seed, 0)}) == 4
