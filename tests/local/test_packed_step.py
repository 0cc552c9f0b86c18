"""Joiners prefilled inside the decoding step's pass (modules.local.engines.slot_attention).

The numbers: through joins into an empty batch and a running one, with and
without cached openings, on a Qwen2 and a Llama tiny model, each row's logits
equal its prompt's alone (within float32 rounding) and its greedy tokens are the
same. The mechanism: a join runs one forward pass, never the separate prefill;
the model's attention implementation is given back after each pass, even one that
fails; models whose attention is not plain causal SDPA keep the separate prefill.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_batching import _alone as generate_alone
from test_kv_slots import _alone, _close
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.engines.kv_slots import Slots
from modules.local.engines.prefix_cache import PrefixCache
from modules.local.engines.slot_attention import packs


@pytest.fixture(scope="module", params=["qwen2.5", "llama-3.1"])
def model(request: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from transformers import AutoModelForCausalLM

    from modules.local.tiny_model import build_tiny_model

    path = build_tiny_model(tmp_path_factory.mktemp("tiny") / request.param, family=request.param)
    return AutoModelForCausalLM.from_pretrained(path).eval()


SHARED = list(range(40, 80))
PROMPTS = [SHARED + [5, 6, 7], [13, 14], SHARED + list(range(200, 230)), list(range(100, 109)), SHARED + [300], [9]]


@pytest.mark.parametrize("cached", [False, True])
def test_rows_joining_in_the_decoding_pass_decode_as_alone(model: Any, cached: bool) -> None:
    import torch

    steps = 30
    expected = {i: _alone(model, p, steps + 20) for i, p in enumerate(PROMPTS)}
    slots = Slots(model, PrefixCache() if cached else None)
    assert slots.packs
    who: list[int] = []
    got: dict[int, list[int]] = {i: [] for i in range(len(PROMPTS))}
    logits_ok = True

    def take(logits: Any) -> None:
        nonlocal logits_ok
        for row in range(logits.shape[0]):
            i = who[row]
            logits_ok &= _close(logits[row], expected[i][1][len(got[i])])
            got[i].append(int(logits[row].argmax()))
        slots.set_next(0, [got[i][-1] for i in who])

    with torch.inference_mode():
        for batch in ([0, 1], [2], [3, 4, 5]):  # the first join finds the batch empty
            who += batch
            take(slots.step_and_join([PROMPTS[i] for i in batch]))
            for _ in range(4):
                take(slots.step())
        for _ in range(steps):
            take(slots.step())
    for i in range(len(PROMPTS)):
        assert got[i] == expected[i][0][: len(got[i])], f"prompt {i}"
    assert logits_ok
    if cached:
        assert slots.prefixes is not None and slots.prefixes.hits > 0


def test_a_join_runs_one_forward_pass_and_never_the_separate_prefill(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from modules.local.batching import Job
    from modules.local.trainable import TrainableModule

    def separate(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a join ran the separate prefill pass")

    monkeypatch.setattr(Slots, "prefill", separate)
    module = TrainableModule(tiny_model_path, max_batch_size=4, engine_process=False).start()
    try:
        model = module._backend.model
        batcher = module._backend.batcher
        request = module.prepare([{"role": "user", "content": "What is the sea?"}], max_new_tokens=5)
        batcher.run(Job(request, None, None))  # loads the batch (and probes the packed pass once)
        passes = []
        model.register_forward_pre_hook(lambda *a: passes.append(1))
        ids, _ = batcher.run(Job(request, None, None))
        assert len(passes) == len(ids) or len(passes) == len(ids) + 1  # one pass per token (+1: a stop token)
        assert batcher.rows.packs
    finally:
        module.stop()


def test_the_attention_implementation_is_given_back_even_when_a_pass_fails(model: Any) -> None:
    import torch

    slots = Slots(model)
    before = model.config._attn_implementation
    with torch.inference_mode(), pytest.raises(IndexError):
        slots.step_and_join([[model.config.vocab_size + 5]])  # no such token: the embedding fails
    assert model.config._attn_implementation == before
    assert slots.plan is None
    out = model(input_ids=torch.tensor([[5, 6, 7]]))  # the model still runs as before
    assert out.logits.shape[1] == 3


@pytest.mark.parametrize(
    "config",
    [
        {"_attn_implementation": "eager"},
        {"_attn_implementation": "sdpa", "layer_types": ["full_attention", "sliding_attention"]},
        {"_attn_implementation": "sdpa", "sliding_window": 4096, "use_sliding_window": True},
        {"_attn_implementation": "sdpa", "attn_logit_softcapping": 50.0},
    ],
)
def test_models_whose_attention_is_not_plain_causal_sdpa_keep_the_separate_prefill(config: dict[str, Any]) -> None:
    assert not packs(_fake(config))


def _fake(config: dict[str, Any], own_config: bool = False) -> Any:
    """A model whose one attention layer reads its configuration (or, with *own_config*, another)."""
    shared = SimpleNamespace(**config)
    layer = SimpleNamespace(num_key_value_groups=2, config=SimpleNamespace(**config) if own_config else shared)
    return SimpleNamespace(config=shared, modules=lambda: [layer])


def test_plain_sdpa_models_pack() -> None:
    plain = {"_attn_implementation": "sdpa", "layer_types": ["full_attention"] * 2, "sliding_window": None}
    assert packs(_fake(plain))
    qwen = {**plain, "sliding_window": 4096, "use_sliding_window": False}
    assert packs(_fake(qwen))


def test_a_model_whose_attention_reads_another_configuration_does_not_pack() -> None:
    """Switching the top-level configuration would leave such layers on SDPA over whole slot buffers."""
    plain = {"_attn_implementation": "sdpa", "layer_types": ["full_attention"] * 2}
    assert not packs(_fake(plain, own_config=True))


def test_a_model_the_packed_pass_does_not_reproduce_keeps_the_separate_prefill(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The probe at load: packed attention that gets the numbers wrong is never used, and answers stay exact."""
    import modules.local.engines.slot_attention as slot_attention
    from modules.local.batching import Job
    from modules.local.trainable import TrainableModule

    right = slot_attention.packed_attention

    def wrong(*args: Any, **kwargs: Any) -> Any:
        out, weights = right(*args, **kwargs)
        return (out * 1.5 if kwargs.get("slots_plan") is not None else out), weights

    monkeypatch.setattr(slot_attention, "packed_attention", wrong)
    slot_attention.register.cache_clear()  # registered again with the wrong one
    try:
        module = TrainableModule(tiny_model_path, max_batch_size=2, engine_process=False).start()
        try:
            request = module.prepare([{"role": "user", "content": "What is the sea?"}], max_new_tokens=6)
            ids, _ = module._backend.batcher.run(Job(request, None, None))
            assert not module._backend.batcher.rows.packs
            assert ids == generate_alone(module, request)  # transformers' generate, the prompt alone
        finally:
            module.stop()
    finally:
        monkeypatch.undo()
        slot_attention.register.cache_clear()
        slot_attention.register()  # the right one again, for the tests after this one


WAVE = [
    *(SHARED + list(range(400 + 7 * i, 400 + 7 * i + 1 + 3 * i)) for i in range(8)),  # a cached opening, 1-22 new
    [17],  # a single token
    list(range(500, 537)),  # nothing cached, longer than any other joiner's new part
    SHARED + SHARED[:16] + [3, 4],  # two cached blocks, then a short tail
    [600, 601],
]


@pytest.mark.parametrize("running", [0, 3])
def test_a_wave_of_joiners_of_every_length_decodes_as_each_alone(model: Any, running: int) -> None:
    """Twelve prompts join in one pass (padded to one shape for their attention), into an empty or a running
    batch: every row's logits are its prompt's alone, and so are its greedy tokens."""
    import torch

    steps = 12
    first = PROMPTS[:running]
    everyone = [*first, *WAVE]
    expected = [_alone(model, p, steps + 2) for p in everyone]
    slots = Slots(model, PrefixCache())
    got: list[list[int]] = [[] for _ in everyone]
    logits_ok = True

    def take(logits: Any) -> None:
        nonlocal logits_ok
        for row in range(logits.shape[0]):
            logits_ok &= _close(logits[row], expected[row][1][len(got[row])])
            got[row].append(int(logits[row].argmax()))
        slots.set_next(0, [tokens[-1] for tokens in got[: logits.shape[0]]])

    with torch.inference_mode():
        slots.step_and_join([SHARED + SHARED])  # the opening is cached before the wave
        slots.remove([0])
        if first:
            take(slots.step_and_join(first))
        take(slots.step_and_join(WAVE))
        for _ in range(steps):
            take(slots.step())
    for row, tokens in enumerate(got):
        assert tokens == expected[row][0][: len(tokens)], f"row {row}"
    assert logits_ok
    assert slots.prefixes is not None and slots.prefixes.hits > 0


def test_joiners_attend_in_one_call_per_layer_whatever_their_number(
    model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass where twelve prompts join three running rows calls SDPA twice per layer (the decoding rows, then
    every joiner at once), not once per joiner: on a small model each call's fixed cost was most of a join."""
    import torch
    import torch.nn.functional as functional

    real = functional.scaled_dot_product_attention
    calls: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    slots = Slots(model, PrefixCache())
    with torch.inference_mode():
        slots.step_and_join(PROMPTS[:3])
        monkeypatch.setattr(functional, "scaled_dot_product_attention", counted)
        slots.step_and_join(WAVE)
    assert len(calls) == 2 * model.config.num_hidden_layers
