"""Batches for the training loop: a seeded order, one global batch per step, split across processes.

``batch_size`` is the *global* batch: the examples one optimizer step learns from,
whatever the number of processes. Each process takes every ``world``-th example of
each global batch, so one process and two processes see the same examples per step
(and, with the loss normalised by the global token count, the same loss curve).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["collate", "global_batches"]


def global_batches(n: int, batch_size: int, epoch: int, seed: int) -> Iterator[list[int]]:
    """Indices of each global batch of one epoch, in an order that depends only on (seed, epoch)."""
    import torch

    generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    order = torch.randperm(n, generator=generator).tolist()
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size]


def collate(examples: Sequence[Mapping[str, list[int]]], pad_id: int) -> dict[str, Any]:
    """Right-pad to the longest example: ``input_ids``, ``attention_mask`` and ``labels`` as tensors."""
    import torch

    width = max(len(e["input_ids"]) for e in examples)

    def padded(key: str, fill: int) -> Any:
        rows = [list(e[key]) + [fill] * (width - len(e[key])) for e in examples]
        return torch.tensor(rows, dtype=torch.long)

    return {
        "input_ids": padded("input_ids", pad_id),
        "attention_mask": padded("attention_mask", 0),
        "labels": padded("labels", -100),
    }
