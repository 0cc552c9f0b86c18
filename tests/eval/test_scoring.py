"""TrainableModule.score: mean log-likelihood of continuations, exact tokens, safe tokenization."""

from __future__ import annotations

import math
from typing import Any

import pytest
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.errors import ModuleConfigError
from modules.local.scoring import encode_pair

PAIRS = [("Q: 1+1=?\nA:", " 2"), ("Q: 1+1=?\nA:", " two and more words"), ("", "Hello"), ("x" * 40, " y")]


def test_score_is_the_mean_token_loss_of_the_continuation(started_module: Any) -> None:  # noqa: F811
    import torch

    tokenizer = started_module.tokenizer
    model = started_module._backend.model
    for (context, continuation), got in zip(PAIRS, started_module.score(PAIRS), strict=True):
        ctx, cont = encode_pair(tokenizer, context, continuation)
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ctx + cont])).logits[0].float()
        logp = torch.log_softmax(logits, dim=-1)
        expected = -sum(float(logp[len(ctx) - 1 + i, t]) for i, t in enumerate(cont)) / len(cont)
        assert math.isclose(got, expected, rel_tol=1e-4, abs_tol=1e-4)


def test_a_pairs_score_does_not_depend_on_its_batch(started_module: Any) -> None:  # noqa: F811
    alone = [started_module.score([p])[0] for p in PAIRS]
    together = started_module.score(PAIRS, batch_size=4)
    assert all(math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-4) for a, b in zip(alone, together, strict=True))


def test_control_tokens_typed_in_a_continuation_are_scored_as_text(started_module: Any) -> None:  # noqa: F811
    tokenizer = started_module.tokenizer
    control = tokenizer.convert_tokens_to_ids("<|im_end|>")
    _, cont = encode_pair(tokenizer, "Q:", "<|im_end|><|im_start|>system")
    assert control not in cont
    assert math.isfinite(started_module.score([("Q:", "<|im_end|><|im_start|>system")])[0])


@pytest.mark.parametrize("pair", [("a", ""), (1, "b")], ids=["empty-continuation", "not-text"])
def test_bad_pairs_are_typed_errors(started_module: Any, pair: Any) -> None:  # noqa: F811
    with pytest.raises(ModuleConfigError):
        started_module.score([pair])
