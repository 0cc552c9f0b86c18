"""The running batch as fixed slots: rows join and leave without copying the other rows' caches.

:class:`~modules.local.engines.kv_rows.Rows` keeps one left-padded cache, so a
row joining or leaving rebuilt every row's keys and values (at 60 rows, 1.2 ms
per join and per leave, next to a 1.5 ms step). :class:`Slots` keeps, per
layer, one buffer ``[rows, heads, length, dim]`` in which row ``i`` owns slot
``i`` and its tokens sit at columns ``0 .. length_i - 1`` (left-aligned, as
the same prompt alone). So:

* a step writes each row's new keys/values at its own column (one scatter per
  layer) and attends over ``max(length) + 1`` columns, the columns past a
  row's own length masked out;
* joining rows are prefilled together (right-padded, no mask: causal attention
  keeps the padding out of real tokens) and only their real columns are copied
  into free slots;
* a leaving row's slot is filled by moving the last rows down (one gather per
  layer for all of them), and :meth:`Slots.remove` says which row went where.

Positions are the rows' own lengths, so a row's rotary positions are those of
its prompt alone. Buffers start zeroed and only ever hold real keys/values, so
a masked column multiplies a finite number by a zero weight. Only models whose
``DynamicCache`` has plain layers use slots (the Batcher checks); others run
one row at a time in :class:`~modules.local.engines.kv_rows.Rows`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from modules.local.engines.kv_rows import RowState, cache_keyword
from modules.local.engines.prefix_cache import BLOCK, PrefixCache
from modules.local.engines.slot_attention import Joiners, Plan, packing, packs, slot_cache

__all__ = ["Slots"]

_MIN_ROWS = 8
_MIN_LENGTH = 128


class Slots:
    """The batch: per-layer slot buffers, each row's length (its next position) and next input token."""

    def __init__(self, model: Any, prefixes: PrefixCache | None = None, packed: bool | None = None) -> None:
        self.model = model
        self.prefixes = prefixes  # the keys and values of prompt openings seen before (None: not kept)
        # whether joiners are prefilled inside the decoding step's pass (None: if the model's attention is
        # plain causal SDPA and a probe of the packed pass gives what plain passes give)
        self.packs = _packs_verified(model) if packed is None else packed
        self.sdpa_mask = packs(model)  # step masks as SDPA takes them: from 2D, 12% of a 64-row step
        self.plan: Plan | None = None  # set while a packed pass runs (read by the cache's layers)
        self.count = 0
        self.lengths: list[int] = []  # real tokens cached per row (== the next token's position)
        self.keys: list[Any] = []  # per layer: [capacity rows, kv heads, capacity length, head dim]
        self.values: list[Any] = []
        self.next_tokens: Any = None  # [capacity rows, 1] long
        self.positions: Any = None  # [capacity rows, 1] long: == lengths
        self.columns: Any = None  # arange(capacity length), for the mask
        self.row_numbers: Any = None  # arange(capacity rows)
        self.rows: Any = None  # arange(count), for this step's scatter
        self.cache: Any = None

    # -- storage ---------------------------------------------------------------------------------

    def _reserve(self, rows: int, length: int, like: list[tuple[Any, Any]]) -> None:
        """Make room for *rows* rows of *length* columns (growing by half again), keeping what is held."""
        import torch

        have_rows = self.keys[0].shape[0] if self.keys else 0
        have_len = self.keys[0].shape[2] if self.keys else 0
        if rows <= have_rows and length <= have_len:
            return
        # each dimension grows only when it is short: a wider batch must not lengthen every row's buffer
        new_rows = have_rows if rows <= have_rows else max(rows, have_rows + have_rows // 2, _MIN_ROWS)
        new_len = have_len if length <= have_len else max(length, have_len + have_len // 2, _MIN_LENGTH)
        device = like[0][0].device
        keys, values = [], []
        for layer, (k, v) in enumerate(like):
            kbuf = torch.zeros((new_rows, k.shape[1], new_len, k.shape[3]), dtype=k.dtype, device=device)
            vbuf = torch.zeros((new_rows, v.shape[1], new_len, v.shape[3]), dtype=v.dtype, device=device)
            if self.count:
                width = max(self.lengths[: self.count])
                kbuf[: self.count, :, :width] = self.keys[layer][: self.count, :, :width]
                vbuf[: self.count, :, :width] = self.values[layer][: self.count, :, :width]
            keys.append(kbuf)
            values.append(vbuf)
        self.keys, self.values = keys, values
        tokens = torch.zeros((new_rows, 1), dtype=torch.long, device=device)
        positions = torch.zeros((new_rows, 1), dtype=torch.long, device=device)
        if self.count:
            tokens[: self.count] = self.next_tokens[: self.count]
            positions[: self.count] = self.positions[: self.count]
        self.next_tokens, self.positions = tokens, positions
        self.columns = torch.arange(new_len, device=device)
        self.row_numbers = torch.arange(new_rows, device=device)
        self.cache = slot_cache(self)

    # -- joining ---------------------------------------------------------------------------------

    def prefill(self, prompts: list[list[int]]) -> Any:
        """Run *prompts* together and give them the next slots; their last logits ``[n, vocab]``.

        Right-padded, without an attention mask: under the causal mask a real token
        never sees the padding after it, and each row's positions start at 0 as alone.
        Only each row's real columns are copied into its slot. With a
        :class:`~modules.local.engines.prefix_cache.PrefixCache`, prompts that open with
        cached blocks are run from the first token after them, on top of a copy of those
        blocks (one forward pass per first cached block, from the blocks its prompts all share), and
        their new blocks are kept.
        """
        import torch

        groups: dict[int, tuple[list[Any], list[int]]] = {}  # id of the first cached block -> (path, prompts)
        for i, prompt in enumerate(prompts):
            path = self.prefixes.lookup(prompt) if self.prefixes is not None else []
            shared, members = groups.setdefault(id(path[0]) if path else 0, (path, []))
            members.append(i)
            del shared[_common(shared, path) :]  # the group runs from the blocks all its prompts share
        blocks: list[list[tuple[Any, Any]]] = [[] for _ in prompts]
        logits: list[Any] = [None] * len(prompts)
        for path, members in groups.values():
            kv, last = self._prefill_group(path, [prompts[i] for i in members])
            for j, i in enumerate(members):
                blocks[i] = [(k[j : j + 1], v[j : j + 1]) for k, v in kv]
                logits[i] = last[j]
                if self.prefixes is not None:
                    self.prefixes.insert(prompts[i], path, kv, j)
        if len(groups) == 1:  # one block copy per layer for all of them (they are in order)
            blocks = [kv]
        self._place(blocks, [0] * len(prompts), [len(p) for p in prompts])
        return torch.stack(logits)

    def _prefill_group(self, path: list[Any], prompts: list[list[int]]) -> tuple[list[tuple[Any, Any]], Any]:
        """One forward pass for *prompts*, which all open with the cached blocks *path*: per layer their
        keys and values ``[n, heads, columns, dim]`` (column ``i``: token ``i``) and their last logits."""
        import torch
        from transformers import DynamicCache

        device = self.model.device
        skip = len(path) * BLOCK
        lengths = [len(p) - skip for p in prompts]
        width = max(lengths)
        ids = torch.zeros((len(prompts), width), dtype=torch.long, device=device)
        for i, p in enumerate(prompts):
            ids[i, : lengths[i]] = torch.tensor(p[skip:], dtype=torch.long)
        cache = DynamicCache(config=self.model.config)
        if path:
            assert self.prefixes is not None  # noqa: S101 - a path comes from it
            for layer, (k, v) in enumerate(self.prefixes.keys_values(path, len(prompts))):
                cache.update(k, v, layer)
            self.prefixes.hits += skip * len(prompts)
        lasts = sorted(set(n - 1 for n in lengths))
        out = self.model(
            input_ids=ids,
            **{cache_keyword(self.model): cache},
            use_cache=True,
            logits_to_keep=torch.tensor(lasts, dtype=torch.long, device=device),
        )
        # The padding columns after a row's length go along, finite (they were computed from the pad
        # id) and masked out until the row's own steps overwrite them.
        kv = [(layer.keys, layer.values) for layer in cache.layers]
        where = torch.tensor([lasts.index(n - 1) for n in lengths], dtype=torch.long, device=device)
        rows = torch.arange(len(prompts), device=device)
        return kv, out.logits[rows, where, :].float()

    def restore(self, rows: list[RowState]) -> None:
        """Give rows taken out by :meth:`take` the next slots again."""
        self._place([r.kv for r in rows], [r.next_token for r in rows], [r.kv[0][0].shape[2] for r in rows])

    def _place(self, blocks: list[list[tuple[Any, Any]]], tokens: list[int], lengths: list[int]) -> None:
        """Write *blocks* (each: per layer ``(keys, values)`` ``[rows, heads, columns, dim]``) into the next
        slots, in order; the rows hold *lengths* real columns and will feed *tokens* next."""
        import torch

        first = self.count
        end = first + len(lengths)
        width = max(b[0][0].shape[2] for b in blocks)
        self._reserve(end, max([width, *self.lengths[:first]]) + 1, blocks[0])
        row = first
        for block in blocks:
            rows, columns = block[0][0].shape[0], block[0][0].shape[2]
            for layer, (k, v) in enumerate(block):
                self.keys[layer][row : row + rows, :, :columns] = k
                self.values[layer][row : row + rows, :, :columns] = v
            row += rows
        self.next_tokens[first:end, 0] = torch.tensor(tokens, dtype=torch.long)
        self.positions[first:end, 0] = torch.tensor(lengths, dtype=torch.long)
        self.lengths[first:] = lengths
        self.count = end

    def set_next(self, first: int, tokens: list[int]) -> None:
        """Rows ``first``, ``first + 1``... feed *tokens* at the next step."""
        import torch

        self.next_tokens[first : first + len(tokens), 0] = torch.tensor(tokens, dtype=torch.long)

    # -- stepping --------------------------------------------------------------------------------

    def step(self) -> Any:
        """One decoding step for every row; the logits ``[rows, vocab]``."""
        n = self.count
        width = max(self.lengths) + 1
        self._reserve(n, width, self._like())
        positions = self.positions[:n]
        self.rows = self.row_numbers[:n]
        seen = self.columns[:width] <= positions  # [rows, columns]: its own and the new token's
        out = self.model(
            input_ids=self.next_tokens[:n],
            attention_mask=seen[:, None, None, :] if self.sdpa_mask else seen.long(),
            position_ids=positions,
            **{cache_keyword(self.model): self.cache},
            use_cache=True,
            logits_to_keep=1,
        )
        self.positions[:n] += 1
        self.lengths = [length + 1 for length in self.lengths]
        return out.logits[:, -1, :].float()

    def step_and_join(self, prompts: list[list[int]]) -> Any:
        """One pass (needs :attr:`packs`): every row decodes one token and *prompts* join in the next slots.

        The logits ``[rows, vocab]``: the running rows' next ones, then each joiner's first
        (see :mod:`~modules.local.engines.slot_attention`). A joiner whose prompt opens with
        cached blocks has them copied into its slot and computes the rest.
        """
        import torch

        n, device = self.count, self.model.device
        lengths = [len(p) for p in prompts]
        width = max(self.lengths[:n]) + 1 if n else 0
        self._reserve(n + len(prompts), max([width, *lengths]) + 1, self._like())
        paths = [self.prefixes.lookup(p) if self.prefixes is not None else [] for p in prompts]
        if self.prefixes is not None:
            self.prefixes.copy_into(paths, n, self.keys, self.values)
        tokens: list[int] = []  # the joiners' tokens, their columns and their rows, end to end
        places: list[int] = []
        owners: list[int] = []
        joins, first = [], n
        for row, (prompt, path) in enumerate(zip(prompts, paths, strict=True), start=n):
            start = len(path) * BLOCK
            tokens += prompt[start:]
            places += range(start, len(prompt))
            owners += [row] * (len(prompt) - start)
            joins.append((row, start, len(prompt), first))
            first += len(prompt) - start
        ids, rows = _after(self.next_tokens[:n, 0], tokens), _after(self.row_numbers[:n], owners)
        columns = _after(self.positions[:n, 0], places)
        seen = (self.columns[:width] <= self.positions[:n])[:, None, None, :] if n else None
        self.plan = Plan(n, width, seen, joins, rows, columns, Joiners.of(joins, device))
        keep = [*range(n), *(f + length - start - 1 for _, start, length, f in joins)]
        try:
            with packing(self.model):
                out = self.model(
                    input_ids=ids[None],
                    position_ids=self.plan.columns[None],
                    **{cache_keyword(self.model): self.cache},
                    use_cache=True,
                    logits_to_keep=torch.tensor(keep, dtype=torch.long, device=device),
                    slots_plan=self.plan,
                )
        finally:
            self.plan = None
        self.positions[:n] += 1
        self.positions[n : n + len(prompts), 0] = torch.tensor(lengths, dtype=torch.long)
        self.lengths = [length + 1 for length in self.lengths[:n]] + lengths
        self.count = n + len(prompts)
        if self.prefixes is not None:
            kv = list(zip(self.keys, self.values, strict=True))
            for row, (prompt, path) in enumerate(zip(prompts, paths, strict=True), start=n):
                self.prefixes.insert(prompt, path, kv, row)
        return out.logits[0].float()

    def _like(self) -> list[tuple[Any, Any]]:
        """Per layer, a tensor with the keys' and values' dtype, device, heads and dim (for :meth:`_reserve`)."""
        if self.keys:
            return [(k[:1], v[:1]) for k, v in zip(self.keys, self.values, strict=True)]
        import torch

        config = self.model.config
        heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        empty = torch.empty((1, heads, 0, dim), dtype=self.model.dtype, device=self.model.device)
        return [(empty, empty)] * config.num_hidden_layers

    # -- leaving ---------------------------------------------------------------------------------

    def take(self, index: int) -> RowState:
        """Row *index*'s own state, to :meth:`restore` later; call :meth:`remove` after."""
        n = self.lengths[index]
        pairs = zip(self.keys, self.values, strict=True)
        kv = [(k[index : index + 1, :, :n].clone(), v[index : index + 1, :, :n].clone()) for k, v in pairs]
        return RowState(kv, int(self.next_tokens[index, 0]), n)

    def remove(self, gone: Collection[int]) -> list[int]:
        """Drop the rows at *gone*; return, for each row now, the index it had before."""
        import torch

        order = list(range(self.count))
        if not gone:
            return order
        keep_count = self.count - len(gone)
        holes = sorted(i for i in gone if i < keep_count)
        movers = [i for i in range(keep_count, self.count) if i not in gone]
        if holes:
            device = self.next_tokens.device
            dst = torch.tensor(holes, dtype=torch.long, device=device)
            src = torch.tensor(movers, dtype=torch.long, device=device)
            width = max(self.lengths[i] for i in movers)
            for k, v in zip(self.keys, self.values, strict=True):
                k[dst, :, :width] = k[src, :, :width]
                v[dst, :, :width] = v[src, :, :width]
            self.next_tokens[dst] = self.next_tokens[src]
            self.positions[dst] = self.positions[src]
            for hole, mover in zip(holes, movers, strict=True):
                order[hole] = mover
                self.lengths[hole] = self.lengths[mover]
        del order[keep_count:]
        del self.lengths[keep_count:]
        self.count = keep_count
        return order


def _packs_verified(model: Any) -> bool:
    """Whether *model* may take the packed pass: its attention is plain causal SDPA (:func:`packs`), and on a
    probe (a prompt alone, then a row decoding while another joins) the packed pass gives the last logits
    that plain forward passes give. A model whose layers do something the packed attention does not
    reproduce keeps the separate prefill instead of decoding wrongly."""
    import torch

    if not packs(model):
        return False
    probe = Slots(model, None, packed=True)
    first, second = [1, 2, 3, 4, 5], [6, 7, 8]
    device = model.device

    def alone(ids: list[int]) -> Any:
        return model(input_ids=torch.tensor([ids], device=device)).logits[0, -1].float()

    with torch.inference_mode():
        a = probe.step_and_join([first])
        token = int(a[0].argmax())
        probe.set_next(0, [token])
        b = probe.step_and_join([second])
        pairs = ((a[0], alone(first)), (b[0], alone([*first, token])), (b[1], alone(second)))
    tolerance = 1e-4 if model.dtype in (torch.float32, torch.float64) else 3e-2
    return all(bool((got - want).abs().max() <= tolerance * max(1.0, float(want.abs().max()))) for got, want in pairs)


def _after(running: Any, joining: list[int]) -> Any:
    """The long tensor *running* with *joining* after it."""
    import torch

    return torch.cat([running, torch.tensor(joining, dtype=torch.long, device=running.device)])


def _common(a: list[Any], b: list[Any]) -> int:
    """How many blocks the cached paths *a* and *b* share from the start."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x is not y:
            break
        n += 1
    return n
