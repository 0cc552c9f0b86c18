"""The running batch of a continuous-batching loop: one left-padded KV cache whose rows come and go.

Each row is one request. Rows are aligned on the right (the newest token of
every row is the last column); the columns a shorter row lacks on the left are
padding, masked out by the attention mask. A row joins by having its prompt
prefilled (several joiners are prefilled together) and its cache pasted under
the others; it leaves by being cut out, and may come back later with the cache
it took with it (see :class:`RowState`). Columns that are padding for every row
are dropped, so the cache is as wide as its longest row.

Position ids are given explicitly (the count of a row's real tokens before
each one), so a row's rotary positions are exactly those of the same prompt
run alone; padding never shifts them.

This is plain tensor bookkeeping on a transformers ``DynamicCache``
(``cache.layers[i].keys / .values`` of shape ``[batch, heads, seq, dim]``);
models whose cache layers are not plain dynamic layers (sliding windows,
hybrid caches) are run one request at a time by the caller.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = ["RowState", "Rows", "cache_keyword", "plain_cache_ok"]

_SPARE = 64
"""Columns a batch's cache buffer grows by at least (then by half its width): amortised O(1) appends."""


def cache_keyword(model: Any) -> str:
    """The keyword *model*'s ``forward`` takes its KV cache by: ``cache`` (transformers 5.2x, where
    ``past_key_values`` is deprecated, to be removed in 5.40) or ``past_key_values`` (before)."""
    cls: Any = type(model)
    return _cache_keyword(cls)


@cache
def _cache_keyword(cls: Any) -> str:
    import inspect

    try:
        parameters = inspect.signature(cls.forward).parameters
    except (TypeError, ValueError):  # a forward without a readable signature: the long-standing name
        return "past_key_values"
    return "cache" if "cache" in parameters else "past_key_values"


@dataclass
class RowState:
    """A row taken out of the batch: its own keys/values (no padding), next input token and position."""

    kv: list[tuple[Any, Any]]
    next_token: int
    position: int


def plain_cache_ok(model: Any) -> bool:
    """Whether *model*'s ``DynamicCache`` has only plain layers (whose rows may be cut and pasted)."""
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    cache = DynamicCache(config=model.config)
    return all(type(layer) is DynamicLayer for layer in cache.layers)


class Rows:
    """The batch: a ``DynamicCache``, its 2-D attention mask, each row's next token and next position."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.cache: Any = None
        self.mask: Any = None  # [rows, width] long, 0 for left padding
        self.next_tokens: Any = None  # [rows, 1] long
        self.positions: Any = None  # [rows, 1] long
        self.count = 0

    # -- joining ---------------------------------------------------------------------------------

    def prefill(self, prompts: list[list[int]]) -> Any:
        """Run *prompts* (left-padded together) through the model; return their last logits ``[n, vocab]``.

        Their caches are pasted below the running rows; :meth:`set_next` then
        gives each its first generated token.
        """
        import torch
        from transformers import DynamicCache

        device = self.model.device
        width = max(len(p) for p in prompts)
        ids = torch.zeros((len(prompts), width), dtype=torch.long, device=device)
        mask = torch.zeros((len(prompts), width), dtype=torch.long, device=device)
        for i, p in enumerate(prompts):
            ids[i, width - len(p) :] = torch.tensor(p, dtype=torch.long)
            mask[i, width - len(p) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        cache = DynamicCache(config=self.model.config)
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            **{cache_keyword(self.model): cache},
            use_cache=True,
            logits_to_keep=1,
        )
        # A padding column's keys/values may be garbage (even NaN: its query attended to nothing);
        # masked weights are 0, but 0 * NaN is NaN, so they are zeroed here once.
        lengths = torch.tensor([[len(p)] for p in prompts], dtype=torch.long, device=device)
        placeholder = torch.zeros((len(prompts), 1), dtype=torch.long, device=device)
        if self.count == 0 and len(prompts) == 1:  # alone: keep the model's own cache (any layer kind: a
            # sliding-window layer keeps fewer columns than the prompt has, so nothing here reads them)
            self.cache, self.mask, self.next_tokens, self.positions, self.count = cache, mask, placeholder, lengths, 1
        else:
            real = mask[:, None, :, None].bool()
            kv = [(_zero_where_not(real, layer.keys), _zero_where_not(real, layer.values)) for layer in cache.layers]
            self._paste(kv, mask, placeholder, lengths)
        return out.logits[:, -1, :].float()

    def restore(self, rows: list[RowState]) -> None:
        """Paste rows taken out by :meth:`take` back below the running ones."""
        import torch

        device = self.model.device
        width = max(r.kv[0][0].shape[2] for r in rows)
        n_layers = len(rows[0].kv)
        kv = []
        for layer in range(n_layers):
            keys = torch.cat([_left_pad(r.kv[layer][0], width) for r in rows])
            values = torch.cat([_left_pad(r.kv[layer][1], width) for r in rows])
            kv.append((keys, values))
        mask = torch.zeros((len(rows), width), dtype=torch.long, device=device)
        for i, r in enumerate(rows):
            mask[i, width - r.kv[0][0].shape[2] :] = 1
        tokens = torch.tensor([[r.next_token] for r in rows], dtype=torch.long, device=device)
        positions = torch.tensor([[r.position] for r in rows], dtype=torch.long, device=device)
        self._paste(kv, mask, tokens, positions)

    def _paste(self, kv: list[tuple[Any, Any]], mask: Any, tokens: Any, positions: Any) -> None:
        import torch
        from transformers import DynamicCache

        if self.count == 0:
            merged_kv, merged_mask = kv, mask
            merged_tokens, merged_positions = tokens, positions
        else:
            width = max(self.mask.shape[1], mask.shape[1])
            old = [(layer.keys, layer.values) for layer in self.cache.layers]
            merged_kv = [
                (
                    torch.cat([_left_pad(ok, width), _left_pad(nk, width)]),
                    torch.cat([_left_pad(ov, width), _left_pad(nv, width)]),
                )
                for (ok, ov), (nk, nv) in zip(old, kv, strict=True)
            ]
            merged_mask = torch.cat([_left_pad_2d(self.mask, width), _left_pad_2d(mask, width)])
            merged_tokens = torch.cat([self.next_tokens, tokens])
            merged_positions = torch.cat([self.positions, positions])
        cache = DynamicCache(config=self.model.config)
        cache.layers = [_growing_layer(keys, values) for keys, values in merged_kv]
        self.cache, self.mask = cache, merged_mask
        self.next_tokens, self.positions = merged_tokens, merged_positions
        self.count = int(merged_mask.shape[0])

    def set_next(self, first: int, tokens: list[int]) -> None:
        """Rows ``first``, ``first + 1``... feed *tokens* at the next step."""
        import torch

        self.next_tokens[first : first + len(tokens), 0] = torch.tensor(tokens, dtype=torch.long)

    # -- stepping --------------------------------------------------------------------------------

    def step(self) -> Any:
        """One decoding step for every row: feed each row's next token; return the logits ``[rows, vocab]``."""
        import torch

        ones = torch.ones((self.count, 1), dtype=torch.long, device=self.mask.device)
        self.mask = torch.cat([self.mask, ones], dim=1)
        out = self.model(
            input_ids=self.next_tokens,
            attention_mask=self.mask,
            position_ids=self.positions,
            **{cache_keyword(self.model): self.cache},
            use_cache=True,
            logits_to_keep=1,
        )
        self.positions = self.positions + 1
        return out.logits[:, -1, :].float()

    # -- leaving ---------------------------------------------------------------------------------

    def take(self, index: int) -> RowState:
        """Row *index*'s own state (its padding stripped), to :meth:`restore` later; call :meth:`keep` after."""
        real = int(self.mask[index].sum())
        kv = [
            (layer.keys[index : index + 1, :, -real:, :].clone(), layer.values[index : index + 1, :, -real:, :].clone())
            for layer in self.cache.layers
        ]
        return RowState(kv, int(self.next_tokens[index, 0]), int(self.positions[index, 0]))

    def remove(self, gone: Collection[int]) -> list[int]:
        """Drop the rows at *gone* (the others keep their order); return the indices they had."""
        kept = [i for i in range(self.count) if i not in gone]
        self.keep(kept)
        return kept

    def keep(self, indices: list[int]) -> None:
        """Keep only the rows at *indices* (in that order); drop the columns that are padding for all of them."""
        import torch

        if not indices:
            self.cache = self.mask = self.next_tokens = self.positions = None
            self.count = 0
            return
        if indices == list(range(self.count)):
            return
        select = torch.tensor(indices, dtype=torch.long, device=self.mask.device)
        mask = self.mask.index_select(0, select)
        used = mask.any(dim=0).nonzero()
        start = int(used[0, 0]) if used.numel() else mask.shape[1]
        self.mask = mask[:, start:]
        for layer in self.cache.layers:
            layer.keys = layer.keys.index_select(0, select)[:, :, start:, :]
            layer.values = layer.values.index_select(0, select)[:, :, start:, :]
        self.next_tokens = self.next_tokens.index_select(0, select)
        self.positions = self.positions.index_select(0, select)
        self.count = len(indices)


def _zero_where_not(keep: Any, tensor: Any) -> Any:
    import torch

    return torch.where(keep, tensor, torch.zeros((), dtype=tensor.dtype, device=tensor.device))


def _growing_layer(keys: Any, values: Any) -> Any:
    """A plain ``DynamicLayer`` holding *keys*/*values* whose appends write into spare columns.

    ``DynamicLayer.update`` concatenates, copying the whole cache at every step;
    at 64 rows that copy was about a sixth of a decoding step. This layer keeps
    its tensors as views of a wider buffer and writes each step's columns into
    the spare room (the buffer grows by half its width when full), so a step
    copies only the new columns. The model reads the same values; only their
    storage differs. When :meth:`Rows.keep` assigns new ``keys``/``values``,
    the next update starts a new buffer from them.
    """
    layer = _growing_class()()
    layer.lazy_initialization(keys, values)
    layer.keys, layer.values = keys, values
    return layer


@cache
def _growing_class() -> type:
    from transformers.cache_utils import DynamicLayer

    class GrowingLayer(DynamicLayer):  # type: ignore[misc]  # transformers' classes are Any to mypy
        keys: Any
        values: Any
        spare: tuple[Any, Any, Any, Any] | None = None  # (keys view, values view, key buffer, value buffer)

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            n, add = self.keys.shape[-2], key_states.shape[-2]
            spare = self.spare
            if spare is None or spare[0] is not self.keys or spare[2].shape[-2] < n + add:
                width = n + add + max(_SPARE, n // 2)
                kbuf, vbuf = _widened(self.keys, width), _widened(self.values, width)
            else:
                kbuf, vbuf = spare[2], spare[3]
            kbuf[:, :, n : n + add] = key_states
            vbuf[:, :, n : n + add] = value_states
            self.keys, self.values = kbuf[:, :, : n + add], vbuf[:, :, : n + add]
            self.spare = (self.keys, self.values, kbuf, vbuf)
            return self.keys, self.values

    return GrowingLayer


def _widened(tensor: Any, width: int) -> Any:
    """A new ``[batch, heads, width, dim]`` buffer whose first columns hold *tensor*."""
    import torch

    batch, heads, n, dim = tensor.shape
    buffer = torch.empty((batch, heads, width, dim), dtype=tensor.dtype, device=tensor.device)
    buffer[:, :, :n] = tensor
    return buffer


def _left_pad(tensor: Any, width: int) -> Any:
    """*tensor* ``[b, h, seq, d]`` with zero columns added on the left up to *width*."""
    import torch

    missing = width - tensor.shape[2]
    if missing <= 0:
        return tensor
    pad = torch.zeros(
        (tensor.shape[0], tensor.shape[1], missing, tensor.shape[3]), dtype=tensor.dtype, device=tensor.device
    )
    return torch.cat([pad, tensor], dim=2)


def _left_pad_2d(mask: Any, width: int) -> Any:
    import torch

    missing = width - mask.shape[1]
    if missing <= 0:
        return mask
    return torch.cat([torch.zeros((mask.shape[0], missing), dtype=mask.dtype, device=mask.device), mask], dim=1)
