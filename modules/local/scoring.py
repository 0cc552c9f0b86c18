"""Log-likelihood of continuations: what PPL evaluation asks of a local model.

For each ``(context, continuation)`` pair the model reads ``context`` then
``continuation`` and reports the mean negative log-likelihood of the
continuation's tokens (lower: the model finds it likelier). The two texts are
tokenized apart and joined, so the continuation is scored on exactly its own
tokens whatever the context ends with, and both go through the same safe
tokenization as generation: the whole text is data, and a continuation that
spells ``<|im_end|>`` is scored as those characters, never as the control token.

An empty context starts from the tokenizer's bos token (or eos, as after GPT-2's
``<|endoftext|>``), so the first token of the continuation is scored too.

Pairs are scored in batches, right-padded; one pair's scores do not depend on
which pairs share its batch beyond float rounding, and callers that need
bit-identical results (PPL over worker processes) score one sample's candidates
as one batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from modules.errors import ContextLengthError, ModelNotStartedError, ModuleConfigError
from modules.local.safe_tokens import encode_with_spans

__all__ = ["continuation_nll", "encode_pair"]


def _as_data(tokenizer: Any, text: str) -> list[int]:
    return encode_with_spans(tokenizer, text, [(0, len(text))]) if text else []


def encode_pair(tokenizer: Any, context: str, continuation: str) -> tuple[list[int], list[int]]:
    """The context's ids (a start token when empty) and the continuation's ids, tokenized apart."""
    if not isinstance(context, str) or not isinstance(continuation, str):
        raise ModuleConfigError(f"pairs: expected (context, continuation) strings, got {context!r}, {continuation!r}")
    ctx = _as_data(tokenizer, context)
    if not ctx:
        first = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        if first is None:
            raise ModuleConfigError("context: empty, and the tokenizer has no bos or eos token to start from")
        ctx = [first]
    cont = _as_data(tokenizer, continuation)
    if not cont:
        raise ModuleConfigError("continuation: empty; there is nothing to score")
    return ctx, cont


def continuation_nll(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[str, str]],
    *,
    max_context: int,
    batch_size: int = 8,
) -> list[float]:
    """Mean negative log-likelihood (nats per token) of each pair's continuation."""
    import torch

    if model is None:
        raise ModelNotStartedError("call start() before scoring")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ModuleConfigError(f"batch_size: expected an int >= 1, got {batch_size!r}")
    encoded = [encode_pair(tokenizer, c, t) for c, t in pairs]
    for ctx, cont in encoded:
        if len(ctx) + len(cont) > max_context:
            raise ContextLengthError(len(ctx) + len(cont), 0, max_context, "shorten the prompt")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id or 0
    out: list[float] = []
    for start in range(0, len(encoded), batch_size):
        batch = encoded[start : start + batch_size]
        width = max(len(c) + len(t) for c, t in batch)
        ids = torch.full((len(batch), width), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, (ctx, cont) in enumerate(batch):
            seq = ctx + cont
            ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
            mask[row, : len(seq)] = 1
        with torch.no_grad():
            logits = model(input_ids=ids.to(model.device), attention_mask=mask.to(model.device)).logits
        logp = torch.log_softmax(logits.float(), dim=-1).cpu()
        for row, (ctx, cont) in enumerate(batch):
            # the token at position p is predicted by the logits at p - 1
            positions = torch.arange(len(ctx) - 1, len(ctx) + len(cont) - 1)
            targets = torch.tensor(cont, dtype=torch.long)
            out.append(float(-logp[row, positions, targets].mean()))
    return out
