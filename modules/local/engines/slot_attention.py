"""One forward pass that decodes the running rows and prefills the joining ones: attention over the slots.

A loop iteration where requests join used to run two passes: the joiners' prefill,
then the decoding step for every row. On a small model most of a pass is fixed
cost (about 1 ms on the tiny model, whatever its width), so a join cost a second
step. :meth:`~modules.local.engines.kv_slots.Slots.step_and_join` packs both into
one sequence instead: the running rows' next tokens, then each joiner's prompt
tokens (from the first one its cached opening does not cover). The model's own
layers run on it unchanged (embeddings, norms, projections, rotary positions from
each token's own position id); only attention is ours, registered with
transformers as :data:`NAME` for the duration of that pass:

* each token's keys and values are written into its row's slot, at its column;
* the decoding tokens attend over their rows' slots with the padding columns masked
  out, exactly as the step does through transformers' SDPA path (grouped-query
  heads packed the same way);
* each joiner's tokens attend causally over its own slot: SDPA with ``is_causal``
  for a whole prompt (what a prefill alone runs), with an explicit causal mask
  shifted by the cached opening's length otherwise; two joiners or more in one
  call, padded to one shape (:class:`Joiners`).

The slots' ``DynamicCache`` (:func:`slot_cache`), whose layers write each token's
keys and values into its row's slot, lives here too.

Outside such a pass (``slots_plan`` not given) the function is transformers' SDPA
attention, so nothing else that uses the model changes. Models whose attention is
not plain causal SDPA (sliding windows, soft-capped logits) never take this path
(:func:`packs`), nor does a model on which a probe of the packed pass does not give
what plain passes give (checked once per loaded model, see
:class:`~modules.local.engines.kv_slots.Slots`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = ["NAME", "Joiners", "Plan", "packed_attention", "packs", "register", "slot_cache"]

NAME = "prompter_slots"
"""The attention implementation's name in transformers' registries, while a packed pass runs."""

_PASS = threading.local()  # .on while this thread runs a packed pass: the mask builder then builds nothing


@dataclass
class Plan:
    """Where the tokens of one packed pass go and what each attends to."""

    decoding: int
    """The first ``decoding`` tokens are the running rows' next tokens, row ``i`` at token ``i``."""
    width: int
    """Columns the decoding rows attend over (their longest length, plus the new token)."""
    mask: Any
    """``[decoding, 1, 1, width]`` bool: the columns each decoding row sees."""
    joins: list[tuple[int, int, int, int]]
    """Per joiner: its row, the first column computed in this pass, its length, its first token's index."""
    rows: Any
    """``[tokens]`` long: each token's row (where its keys and values are written)."""
    columns: Any
    """``[tokens]`` long: each token's column (its position)."""
    together: Joiners | None = None
    """With two joiners or more: their attention as one batched call (see :class:`Joiners`)."""


@dataclass
class Joiners:
    """Several joiners' attention as one SDPA call, built once per pass and read by every layer.

    Each joiner's query tokens are gathered into a row of ``[joiners, heads, most tokens, dim]``,
    its slot's first ``longest`` columns into keys and values, and the mask lets token ``i`` see
    columns ``0 .. start + i`` of its own slot, as its own causal pass does. A joiner with fewer
    tokens than the most repeats its last query (its copies are computed and dropped), so no row of
    the mask is empty. One call instead of one per joiner: a wave of 60 joiners cost 120 SDPA calls
    per layer pair, and the loop around them, about a third of that pass on the tiny model.
    """

    rows: Any
    """``[joiners]`` long: each joiner's slot."""
    queries: Any
    """``[joiners * most]`` long: the packed token each query place reads."""
    mask: Any
    """``[joiners, 1, most, longest]`` bool."""
    kept: Any
    """``[tokens of the joiners]`` long: the places (in ``joiners * most``) that are real tokens, in order."""
    most: int
    longest: int

    @classmethod
    def of(cls, joins: list[tuple[int, int, int, int]], device: Any) -> Joiners | None:
        """The layout for *joins* (as :attr:`Plan.joins`), or None for fewer than two."""
        import torch

        if len(joins) < 2:
            return None
        rows, starts, lengths, firsts = (torch.tensor(x, dtype=torch.long, device=device) for x in zip(*joins))
        counts = lengths - starts
        most, longest = int(counts.max()), int(lengths.max())
        place = torch.arange(most, device=device)[None, :]
        step = torch.minimum(place, counts[:, None] - 1)  # [joiners, most]: past its last token, its last again
        seen = torch.arange(longest, device=device)[None, None, :] <= (starts[:, None] + step)[:, :, None]
        kept = torch.arange(len(joins) * most, device=device).view(len(joins), most)[place < counts[:, None]]
        return cls(rows, (firsts[:, None] + step).reshape(-1), seen[:, None], kept, most, longest)


def packs(model: Any) -> bool:
    """Whether *model*'s attention is plain causal SDPA over every layer, which :func:`packed_attention` reproduces."""
    config = model.config
    windowed = getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", True)
    # Every attention layer must read the configuration we switch (a model wrapping a text model with a
    # configuration of its own would keep SDPA there, and SDPA over whole slot buffers is wrong).
    layers = [m for m in model.modules() if hasattr(m, "num_key_value_groups") and hasattr(m, "config")]
    return (
        bool(layers)
        and all(layer.config is config for layer in layers)
        and getattr(config, "_attn_implementation", None) == "sdpa"
        and all(kind == "full_attention" for kind in getattr(config, "layer_types", None) or ["full_attention"])
        and not windowed
        and getattr(config, "attn_logit_softcapping", None) is None
    )


class packing:  # noqa: N801 - used as ``with packing(model):``
    """Run *model* with :data:`NAME` as its attention for the body of the ``with`` (then as before)."""

    def __init__(self, model: Any) -> None:
        self.config = model.config
        self.before: Any = None

    def __enter__(self) -> None:
        register()
        self.before = self.config._attn_implementation
        self.config._attn_implementation = NAME
        _PASS.on = True

    def __exit__(self, *exc: object) -> None:
        _PASS.on = False
        self.config._attn_implementation = self.before


@cache
def register() -> None:
    """Make :data:`NAME` known to transformers' attention and mask registries (once)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    def mask(*args: Any, **kwargs: Any) -> Any:
        if getattr(_PASS, "on", False):
            return None  # the plan carries what each token sees
        return sdpa_mask(*args, **kwargs)

    AttentionInterface.register(NAME, packed_attention)
    AttentionMaskInterface.register(NAME, mask)


def packed_attention(
    module: Any,
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[Any, None]:
    """Attention for a packed pass (see the module); transformers' SDPA attention without a plan.

    *key* and *value* are the slot buffers ``[rows, heads, columns, dim]`` (the cache wrote
    this pass's tokens into them); *query* is ``[1, heads, tokens, dim]``.
    """
    import torch
    from torch.nn.functional import scaled_dot_product_attention as sdpa
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    plan: Plan | None = kwargs.pop("slots_plan", None)
    if plan is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout, scaling, **kwargs)  # type: ignore[no-any-return]
    heads, dim = query.shape[1], query.shape[3]
    groups = module.num_key_value_groups
    out = query.new_empty((1, query.shape[2], heads, dim))
    n, width = plan.decoding, plan.width
    if n:
        q = query[0, :, :n, :].transpose(0, 1).reshape(n, heads // groups, groups, dim)  # as transformers packs it
        o = sdpa(q, key[:n, :, :width], value[:n, :, :width], attn_mask=plan.mask, scale=scaling)
        out[0, :n] = o.reshape(n, heads, dim)
    if plan.together is not None:
        _joiners_at_once(plan.together, query, key, value, out, n, scaling)
        return out, None
    for row, start, length, first in plan.joins:
        count = length - start
        q = query[:, :, first : first + count, :]
        k, v = key[row : row + 1, :, :length], value[row : row + 1, :, :length]
        if start == 0:  # the whole prompt: what its prefill alone runs
            o = sdpa(q, k, v, is_causal=True, scale=scaling, enable_gqa=True)
        else:  # after a cached opening: token i sees columns 0 .. start + i
            here = torch.arange(length, device=q.device)
            seen = here[None, :] <= here[start:, None]
            o = sdpa(q, k, v, attn_mask=seen[None, None], scale=scaling, enable_gqa=True)
        out[0, first : first + count] = o[0].transpose(0, 1)
    return out, None


def _joiners_at_once(lay: Joiners, query: Any, key: Any, value: Any, out: Any, n: int, scaling: float | None) -> None:
    """Every joiner's attention in one call (see :class:`Joiners`), written to ``out[0, n:]``."""
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    count, (heads, dim) = len(lay.rows), (query.shape[1], query.shape[3])
    q = query[0].index_select(1, lay.queries).view(heads, count, lay.most, dim).transpose(0, 1)
    k = key[:, :, : lay.longest].index_select(0, lay.rows)
    v = value[:, :, : lay.longest].index_select(0, lay.rows)
    # enable_gqa: each query head reads its key/value head in place (the same numbers as repeat_kv's copies)
    o = sdpa(q, k, v, attn_mask=lay.mask, scale=scaling, enable_gqa=True)
    out[0, n:] = o.transpose(1, 2).reshape(count * lay.most, heads, dim).index_select(0, lay.kept)


def slot_cache(slots: Any) -> Any:
    """A ``DynamicCache`` whose layers write into the buffers of *slots*, a
    :class:`~modules.local.engines.kv_slots.Slots` (see :func:`_slot_layer_class`)."""
    from transformers import DynamicCache

    cache = DynamicCache(config=slots.model.config)
    cache.layers = [_slot_layer_class()(slots, layer) for layer in range(len(slots.keys))]
    return cache


@cache
def _slot_layer_class() -> type:
    from transformers.cache_utils import DynamicLayer

    class SlotLayer(DynamicLayer):  # type: ignore[misc]  # transformers' classes are Any to mypy
        """One layer's view of the slots: appends at each row's own column; reads ``max(length) + 1``."""

        def __init__(self, slots: Any, layer: int) -> None:
            super().__init__()
            self.slots, self.layer = slots, layer
            self.is_initialized = True

        def get_seq_length(self) -> int:
            return int(max(self.slots.lengths, default=0))

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            slots = self.slots
            n, rows = slots.count, slots.rows
            keys, values = slots.keys[self.layer], slots.values[self.layer]
            plan = slots.plan
            if plan is not None:  # a packed pass: every token to its row and column; attention reads the plan
                keys[plan.rows, :, plan.columns] = key_states[0].transpose(0, 1)
                values[plan.rows, :, plan.columns] = value_states[0].transpose(0, 1)
                return keys, values
            columns = slots.positions[:n, 0]
            keys[rows, :, columns] = key_states[:, :, 0]
            values[rows, :, columns] = value_states[:, :, 0]
            width = max(slots.lengths) + 1
            self.keys, self.values = keys[:n, :, :width], values[:n, :, :width]
            return self.keys, self.values

    return SlotLayer
