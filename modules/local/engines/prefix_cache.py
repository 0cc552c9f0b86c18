"""Keys and values of prompt prefixes seen before, so a joining request prefills only what is new.

Requests to one model mostly open alike: the chat template's header, the same
system prompt, the same tools block, a shared few-shot preamble. :class:`PrefixCache`
keeps the keys and values those tokens produced, per block of :data:`BLOCK` token
ids, in a trie keyed by the ids themselves (exact matches only, never a hash):
a prompt whose first blocks are there is prefilled from the first token that is
not, on top of a copy of the cached blocks. Under causal attention a token's
keys and values depend only on the tokens before it, so the cached ones are
those the whole prompt would have produced; the last token of a prompt is never
taken from the cache, since its logits choose the first generated token.

The trie holds at most ``max_tokens`` tokens (:data:`MAX_TOKENS` by default);
past that the blocks used least recently are dropped, leaves first.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BLOCK", "MAX_TOKENS", "PrefixCache"]

BLOCK = 16
"""Token ids per cached block: a prefix is reused in whole blocks."""

MAX_TOKENS = 8192
"""Tokens a cache keeps by default (for the tiny test model, about 4 MB)."""


@dataclass(eq=False)
class _Node:
    """One block of a cached prefix: its ids' keys and values, per layer ``[1, heads, BLOCK, dim]``."""

    kv: list[tuple[Any, Any]]
    parent: _Node | None
    key: tuple[int, ...]
    children: dict[tuple[int, ...], _Node] = field(default_factory=dict)
    used: int = 0


class PrefixCache:
    """A trie of token-id blocks and their keys and values (see the module)."""

    def __init__(self, max_tokens: int = MAX_TOKENS) -> None:
        self.root: dict[tuple[int, ...], _Node] = {}
        self.max_blocks = max(1, max_tokens // BLOCK)
        self.blocks = 0
        self.clock = itertools.count(1)
        self.hits = 0  # prompt tokens taken from the cache (observable by tests and benchmarks)

    def lookup(self, ids: list[int]) -> list[_Node]:
        """The cached blocks that open *ids*, in order (at least one id of *ids* is left after them)."""
        path: list[_Node] = []
        level = self.root
        now = next(self.clock)
        for start in range(0, len(ids) - BLOCK, BLOCK):  # stops with at least one id left over
            node = level.get(tuple(ids[start : start + BLOCK]))
            if node is None:
                break
            node.used = now
            path.append(node)
            level = node.children
        return path

    def keys_values(self, path: list[_Node], rows: int) -> list[tuple[Any, Any]]:
        """Per layer, the keys and values of *path*'s blocks end to end, for *rows* rows ``[rows, heads, n, dim]``."""
        import torch

        joined = []
        for layer in range(len(path[0].kv)):
            k = torch.cat([node.kv[layer][0] for node in path], dim=2)
            v = torch.cat([node.kv[layer][1] for node in path], dim=2)
            joined.append((k.expand(rows, -1, -1, -1), v.expand(rows, -1, -1, -1)))
        return joined

    def copy_into(self, paths: list[list[_Node]], first: int, keys: list[Any], values: list[Any]) -> None:
        """Write each of *paths* (cached openings, from :meth:`lookup`) into rows *first*, *first* + 1, ...
        of the per-layer slot buffers *keys* and *values* ``[rows, heads, columns, dim]``, from column 0:
        one copy per layer for all the rows that open alike."""
        import torch

        sharing: dict[int, tuple[list[_Node], list[int]]] = {}
        for row, path in enumerate(paths, start=first):
            if path:
                sharing.setdefault(id(path[-1]), (path, []))[1].append(row)
        for path, rows in sharing.values():
            columns = len(path) * BLOCK
            where = torch.tensor(rows, dtype=torch.long, device=keys[0].device)
            for layer, (k, v) in enumerate(self.keys_values(path, 1)):
                keys[layer][where, :, :columns] = k
                values[layer][where, :, :columns] = v
            self.hits += columns * len(rows)

    def insert(self, ids: list[int], path: list[_Node], kv: list[tuple[Any, Any]], row: int) -> None:
        """Keep the blocks of *ids* after *path* (its cached opening), read from row *row* of *kv*
        (per layer ``[rows, heads, columns, dim]``, column ``i`` holding token ``i`` of *ids*)."""
        level = path[-1].children if path else self.root
        parent = path[-1] if path else None
        now = next(self.clock)
        for start in range(len(path) * BLOCK, len(ids) - BLOCK, BLOCK):
            key = tuple(ids[start : start + BLOCK])
            node = level.get(key)
            if node is None:
                end = start + BLOCK
                block = [
                    (k[row : row + 1, :, start:end].clone(), v[row : row + 1, :, start:end].clone()) for k, v in kv
                ]
                node = _Node(block, parent, key)
                level[key] = node
                self.blocks += 1
            node.used = now
            parent, level = node, node.children
        if self.blocks > self.max_blocks:
            self._evict()

    def _evict(self) -> None:
        """Drop the least recently used leaves until the cache holds 3/4 of its budget."""
        order = itertools.count()  # ties in age: the order found
        leaves = [(node.used, next(order), node) for node in self._nodes() if not node.children]
        heapq.heapify(leaves)
        target = self.max_blocks * 3 // 4
        while self.blocks > target and leaves:
            _, _, node = heapq.heappop(leaves)
            siblings = node.parent.children if node.parent is not None else self.root
            del siblings[node.key]
            self.blocks -= 1
            parent = node.parent
            if parent is not None and not parent.children:  # its parent is a leaf now: in line by its age
                heapq.heappush(leaves, (parent.used, next(order), parent))

    def _nodes(self) -> list[_Node]:
        found: list[_Node] = []
        todo = list(self.root.values())
        while todo:
            node = todo.pop()
            found.append(node)
            todo.extend(node.children.values())
        return found
