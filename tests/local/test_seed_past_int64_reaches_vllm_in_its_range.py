"""The vLLM engine gives vLLM a seed within a signed 64-bit int: a Python seed past that range (which the
transformers engine takes, hashed) was passed on as it was, to fail inside vLLM. In-range seeds go as given.
Runs without vLLM (the SamplingParams class is passed in)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from modules.local.engines.vllm import sampling_params_for
from modules.local.request import GenerationOptions


def _seed(seed: Any) -> Any:
    job = SimpleNamespace(request=SimpleNamespace(options=GenerationOptions(temperature=1.0, seed=seed)))
    return sampling_params_for(job, [0], lambda **fields: fields, "delta")["seed"]


@pytest.mark.parametrize("seed", [None, 0, 7, -1, 2**63 - 1, -(2**63)], ids=str)
def test_in_range_seeds_go_to_vllm_as_given(seed: Any) -> None:
    assert _seed(seed) == seed


@pytest.mark.parametrize("seed", [2**63, 2**64, -(2**63) - 1, 10**400], ids=["2**63", "2**64", "below", "10**400"])
def test_seeds_past_int64_reach_vllm_in_range_and_apart(seed: int) -> None:
    got = _seed(seed)
    assert -(2**63) <= got < 2**63 and got == _seed(seed)
    assert got not in (_seed(0), _seed(2**63 - 1), _seed(-1))  # never folded onto the seed it wrapped to
