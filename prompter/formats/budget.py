"""The budget a chat template renders under: a deadline, and sizes predicted before allocating.

Checking the clock between statements cannot stop a single builtin that runs for a
minute (``sorted`` over twenty million items) or allocates two gigabytes in one call
(``'{:>{w}}'.format('x', w=2000000000)``).  So every builtin that can amplify is
asked, *before* it runs, how big its result or how long its work will be, from its
operands alone: ``len(a) * n`` for repetition, the width for padding, the number of
occurrences times the growth for ``replace``, the string form of a structure of shared
references for ``str()``.  The limits, per render:

- ``max_chars`` (20,000,000 by default): the output, and any one string built;
- :data:`MAX_ITEMS` (1,000,000): any one list, tuple, dict or range built;
- :data:`MAX_ALLOC_BYTES` (192 MiB): all large values built, added up, so values kept
  alive in namespaces or macro frames cannot add up past the memory bar;
- :data:`MAX_WORK` (5,000,000 element comparisons): one sort, ``in``, ``==``, ``max``, ``.count``,
  ``.index``, or the hash of one tuple used as a key (shared parts count as often as they occur);
- the deadline (``time_budget``), checked on every call, loop step and output chunk, and on every
  64th item lookup (what the `attribute=` filters make, one per item).

Outside a render (jinja folds constant filters at compile time) the same limits apply
with no deadline.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from prompter.errors import TemplateError, TemplateTimeoutError

__all__ = [
    "DEFAULT_MAX_OUTPUT_CHARS",
    "MAX_ALLOC_BYTES",
    "MAX_ITEMS",
    "MAX_SOURCE_CHARS",
    "MAX_WORK",
    "PROBE_RENDER_SECONDS",
    "PROBE_SECONDS",
    "PROBE_TRIES",
    "Budget",
    "ProbeTimedOut",
    "Probing",
    "bounded_concat",
    "bounded_list",
    "check_items",
    "check_key",
    "check_result",
    "check_str",
    "check_time",
    "check_work",
    "count_lookup",
    "guarded_iter",
    "max_chars",
    "may_probe",
    "probe_timed_out",
    "probing",
    "str_bound",
    "weight",
]

DEFAULT_MAX_OUTPUT_CHARS = 20_000_000
"""The most characters a template may produce, or build into one string."""

MAX_SOURCE_CHARS = 100_000
"""The longest template source compiled: compiling runs before any budget can (about 1 s at this size;
the largest shipped template is 8,061 characters)."""

MAX_ITEMS = 1_000_000
"""The most items one list, tuple, dict or range built by a template may hold."""

MAX_ALLOC_BYTES = 192 << 20
"""The most bytes of large values (4,096 characters or items and up) one render may build.

Freed values still count: this is what makes the bar on peak memory hold whatever the
template keeps alive, without measuring memory."""

MAX_WORK = 5_000_000
"""The most element comparisons (a string counts one per 32 characters) one sort, ``in``,
``==``, ``max``/``min`` or ``unique`` may do; well under a second even through a key function."""

_SMALL = 4096
"""Values shorter than this are neither accounted nor checked (the cheap common case)."""

_ITEM_BYTES = 64
"""What one item of a built container is assumed to cost (a pointer and a small object)."""


@dataclass
class Budget:
    """What one render may still spend."""

    deadline: float
    max_chars: int
    allocated: int = 0
    seconds: float = 0.0
    """The whole time budget, for the error message."""
    memo: dict[int, tuple[Any, int]] = field(default_factory=dict)


BUDGET: ContextVar[Budget | None] = ContextVar("prompter_template_budget", default=None)


PROBE_SECONDS = 0.75
"""What one probing session (learning a template's fixed strings, traits or skeleton policy) may
spend, all its renders together: a template slow enough to pass each render's budget still cannot
hold a render call for long (a hostile one with many literals would otherwise take minutes)."""

PROBE_RENDER_SECONDS = 0.25
"""What one render inside a probing session may spend: a template that slow is not worth probing."""


@dataclass
class Probing:
    """A probing session: its renders share :attr:`deadline`; :attr:`timed_out` once one ran past it
    (what the session learnt is then incomplete, and must not be used)."""

    deadline: float
    timed_out: bool = False


PROBING: ContextVar[Probing | None] = ContextVar("prompter_template_probing", default=None)


PROBE_TRIES = 3
"""Probing sessions that may run out of time for one thing to learn before a template is taken as too
slow for it: a machine busy for a moment (another process, a collector's pause) must not keep a fast
template off its fast path for good, and a template slow every time costs at most this many sessions."""

_TIMEOUTS: dict[Any, int] = {}


class ProbeTimedOut(Exception):  # noqa: N818 - a signal between our own modules, not an error to a caller
    """Probes ran out of time and may be tried again: the caller keeps no answer and uses the template."""


def may_probe(key: Any) -> bool:
    """Whether probing for *key* (what is learnt, and from which template) has tries left."""
    return _TIMEOUTS.get(key, 0) < PROBE_TRIES


def probe_timed_out(key: Any) -> bool:
    """Count a probing session for *key* that ran out of time; whether a later render may try again
    (if not, the caller keeps its answer for a template too slow to learn)."""
    if len(_TIMEOUTS) >= 4096:
        _TIMEOUTS.clear()
    _TIMEOUTS[key] = _TIMEOUTS.get(key, 0) + 1
    return may_probe(key)


@contextmanager
def probing(seconds: float = PROBE_SECONDS) -> Iterator[Probing]:
    """Renders inside share one deadline, at most ``seconds`` away (and no later than an enclosing
    session's); a timeout inside is reported to the enclosing session too."""
    outer = PROBING.get()
    deadline = time.monotonic() + seconds
    if outer is not None and outer.deadline < deadline:
        deadline = outer.deadline
    state = Probing(deadline, outer is not None and outer.timed_out)
    token = PROBING.set(state)
    try:
        yield state
    finally:
        PROBING.reset(token)
        if state.timed_out and outer is not None:
            outer.timed_out = True


def max_chars() -> int:
    budget = BUDGET.get()
    return budget.max_chars if budget is not None else DEFAULT_MAX_OUTPUT_CHARS


def timed_out(budget: Budget | None) -> TemplateTimeoutError:
    """The error for a render past its deadline, naming the budget and the remedy."""
    seconds = f" of {budget.seconds:g} s" if budget is not None and budget.seconds else ""
    return TemplateTimeoutError(
        f"chat template ran past its time budget{seconds}; is it looping over a huge range? "
        "(a legitimately slow template can be given more with ModelFormat(time_budget=...))"
    )


def check_time() -> None:
    budget = BUDGET.get()
    if budget is not None and time.monotonic() > budget.deadline:
        raise timed_out(budget)


_lookups = 0


def count_lookup() -> None:
    """Count one item lookup, and check the deadline every 64: ``sort(attribute=...)``
    and ``join(attribute=...)`` make one per item from inside ``sorted`` or ``str.join``, where no
    loop step or output chunk would read the clock (a count shared by threads: it need not be exact)."""
    global _lookups
    _lookups += 1
    if not _lookups & 63:
        check_time()


def check_str(size: int, what: str) -> None:
    """Refuse, before building it, a string of ``size`` characters."""
    limit = max_chars()
    if size > limit:
        raise TemplateError(f"chat template {what}: {size:,} characters, over the cap of {limit:,}")


def check_items(count: int, what: str) -> None:
    """Refuse, before building it, a container of ``count`` items."""
    if count > MAX_ITEMS:
        raise TemplateError(f"chat template {what}: {count:,} items, over the cap of {MAX_ITEMS:,}")


def check_work(units: int, what: str) -> None:
    if units > MAX_WORK:
        raise TemplateError(f"chat template {what}: about {units:,} comparisons, over the cap of {MAX_WORK:,}")


def check_key(value: Any, what: str) -> None:
    """Refuse looking ``value`` up by hash when hashing it would walk too much: a tuple's hash walks
    all of it, shared parts as often as they occur (halves shared sixty deep are 2**60 items)."""
    if isinstance(value, (tuple, frozenset)) and value:
        check_work(weight(value), what)


def _account(nbytes: int) -> None:
    budget = BUDGET.get()
    if budget is None:
        return
    budget.allocated += nbytes
    if budget.allocated > MAX_ALLOC_BYTES:
        raise TemplateError(
            f"chat template built {budget.allocated:,} bytes of values, over the cap of {MAX_ALLOC_BYTES:,}"
        )


def check_result(value: Any, *, new: bool = True) -> Any:
    """Check a value a builtin just built (size caps, and the memory account when ``new``)."""
    if isinstance(value, (str, bytes)):
        if len(value) >= _SMALL:
            check_str(len(value), "built a string")
            if new:
                _account(sys.getsizeof(value))
    elif isinstance(value, (list, tuple, dict, set, frozenset)):
        if len(value) >= _SMALL:
            check_items(len(value), "built a container")
            if new:
                _account(len(value) * _ITEM_BYTES)
    return value


def guarded_iter(value: Any) -> Iterator[Any]:
    """Iterate ``value`` with the deadline checked as it goes (``{% for %}``, lazy filters)."""
    budget = BUDGET.get()
    if budget is None:
        yield from value
        return
    deadline = budget.deadline
    for n, item in enumerate(value):
        if not n & 255 and time.monotonic() > deadline:
            raise timed_out(budget)
        yield item


def bounded_list(value: Iterable[Any], what: str) -> list[Any]:
    """``list(value)``, refusing more than :data:`MAX_ITEMS` items and honouring the deadline."""
    if isinstance(value, (str, list, tuple, dict, set, frozenset, range)):
        check_items(len(value), what)
        return check_result(list(value))  # type: ignore[no-any-return]
    out: list[Any] = []
    for item in guarded_iter(value):
        out.append(item)
        if len(out) > MAX_ITEMS:
            check_items(len(out), what)
    return check_result(out)  # type: ignore[no-any-return]


def bounded_concat(chunks: Iterable[str]) -> str:
    """``"".join(chunks)`` for a block's output (``{% set %}``, a macro, ``{% filter %}``), sized first.

    The chunks are references to strings already built, so a loop printing one big
    string a thousand times costs nothing until this join would copy it a thousand times.
    """
    if not isinstance(chunks, list):
        parts: list[str] = []
        total = 0
        limit = max_chars()
        for chunk in guarded_iter(chunks):
            parts.append(chunk)
            total += len(chunk)
            if total > limit:
                check_str(total, "builds a block of output")
        chunks = parts
    else:
        check_str(sum(map(len, chunks)), "builds a block of output")
    return check_result("".join(chunks))  # type: ignore[no-any-return]


# -- predicting sizes without building anything ------------------------------------------------


def _str_len_bound(s: str, quoted: bool) -> int:
    if not quoted:
        return len(s)
    # repr escapes an ASCII char in at most 4 (``\\x00``), any other in at most 10 (``\\U0001f600``);
    # isascii() is a flag lookup, where isprintable() would walk the string
    return 2 + len(s) * (4 if s.isascii() else 10)


def str_bound(value: Any, limit: int | None = None, *, quoted: bool = False) -> int:
    """An upper bound on ``len(str(value))`` (``repr`` when ``quoted``), walked without building it.

    Shared references count as often as they are printed, so ``[s] * 1000`` is a thousand
    times ``s``; the walk stops as soon as the bound passes ``limit``.
    """
    limit = max_chars() if limit is None else limit
    memo: dict[int, int] = {}
    return _walk(value, limit, quoted, memo, 0)


def _walk(value: Any, limit: int, quoted: bool, memo: dict[int, int], depth: int) -> int:
    if isinstance(value, str):
        return _str_len_bound(value, quoted) + 10  # Markup('...') adds a little
    if isinstance(value, (bool, type(None), float)):
        return 32
    if isinstance(value, int):
        return value.bit_length() // 3 + 2
    if isinstance(value, bytes):
        return 4 * len(value) + 3
    if depth > 200:
        raise TemplateError("chat template builds a structure nested too deeply to print")
    key = id(value)
    if key in memo:
        return memo[key]
    items: Iterable[Any]
    if isinstance(value, dict):
        items = (x for kv in value.items() for x in kv)
        count = 2 * len(value)
    elif isinstance(value, (list, tuple, set, frozenset)):
        items, count = value, len(value)
    else:
        try:  # jinja's namespace prints its dict; object.__getattribute__ skips Undefined's __getattr__
            attrs = object.__getattribute__(value, "_Namespace__attrs")
        except AttributeError:
            attrs = None
        if isinstance(attrs, dict):
            size = 16 + _walk(attrs, limit, True, memo, depth + 1)
            memo[key] = size
            return size
        size = 200  # a jinja object (macro, cycler, loop, undefined): a short fixed repr
        memo[key] = size
        return size
    total = 64 + 4 * count
    for n, item in enumerate(items):
        total += _walk(item, limit, True, memo, depth + 1)
        if total > limit:
            break
        if not n & 1023:
            check_time()
    memo[key] = total
    return total


def weight(value: Any, limit: int = MAX_WORK) -> int:
    """What comparing ``value`` once can cost, in element comparisons (32 chars count as one)."""
    if isinstance(value, (str, bytes)):
        return 1 + len(value) // 32
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        if not value:
            return 1
        return 1 + str_bound(value, limit * 32, quoted=True) // 32
    return 1


def sort_work(items: list[Any]) -> int:
    """Comparisons a sort of ``items`` may do, at worst: n log n times the heaviest item."""
    n = len(items)
    if n < 2:
        return 0
    total = 0
    for n_seen, item in enumerate(items):
        total += weight(item)
        if total > MAX_WORK:
            return MAX_WORK + 1
        if not n_seen & 1023:
            check_time()
    return total * max(1, math.ceil(math.log2(n)))
