"""Fitting a prompt into the model's context: refuse with the numbers, or, opt-in, drop old turns.

A prompt whose tokens plus ``max_new_tokens`` do not fit the context raises
:class:`~modules.errors.ContextLengthError`, naming the token counts and the
remedy. With ``trim="oldest"``, whole oldest turns (see :func:`oldest_turn`)
are dropped until it fits, and the caller is told which messages went.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modules.errors import ContextLengthError
from modules.local.safe_tokens import Rendered

__all__ = ["Fitted", "fit_to_context", "oldest_turn"]


@dataclass(frozen=True)
class Fitted:
    """A prompt that fits: the kept ``messages``, their rendering and token ``ids``, and what was ``dropped``."""

    messages: list[dict[str, Any]]
    rendered: Rendered
    ids: list[int]
    dropped: list[Mapping[str, Any]]


def fit_to_context(
    messages: Sequence[dict[str, Any]],
    encode: Callable[[list[dict[str, Any]]], tuple[Rendered, list[int]]],
    *,
    max_new_tokens: int,
    max_context: int,
    trim: str | None,
) -> Fitted:
    """Render and tokenize *messages* with *encode*, dropping oldest turns (``trim="oldest"``) until they fit.

    The prompt may use ``max_context - max_new_tokens`` tokens. When it does
    not fit and trimming is off, or cannot help (``max_new_tokens`` alone fills
    the context, or only the latest turn is left), this raises
    :class:`~modules.errors.ContextLengthError`. *messages* is not changed.

    The fewest oldest turns whose dropping makes the prompt fit are found by
    bisection (a prompt only shrinks as more of its oldest turns go): a few
    renders for any length of history, not one per dropped turn (850 short
    turns rendered 850 times took 18 s).
    """
    msgs = list(messages)
    budget = max_context - max_new_tokens
    rendered, ids = encode(msgs)
    if len(ids) <= budget:
        return Fitted(msgs, rendered, ids, [])
    if budget < 1:  # no trimming can help
        raise ContextLengthError(len(ids), max_new_tokens, max_context, "max_new_tokens alone fills the context")
    cuts = _turn_cuts(msgs) if trim == "oldest" else []
    if not cuts:
        remedy = (
            "even the latest turn alone does not fit"
            if trim
            else "shorten the input or history, lower max_new_tokens, or pass trim='oldest'"
        )
        raise ContextLengthError(len(ids), max_new_tokens, max_context, remedy)
    first = _first_turn(msgs)
    assert first is not None  # noqa: S101 - there are cuts, so there is a turn

    def kept(k: int) -> list[dict[str, Any]]:  # the messages left with the k oldest turns dropped
        return msgs[:first] + msgs[cuts[k - 1] :]

    count = len(cuts)  # dropping `count` turns fits; dropping `low` does not
    rendered, ids = encode(kept(count))
    if len(ids) > budget:
        raise ContextLengthError(len(ids), max_new_tokens, max_context, "even the latest turn alone does not fit")
    low = 0
    while count - low > 1:
        middle = (low + count) // 2
        tried, tried_ids = encode(kept(middle))
        if len(tried_ids) <= budget:
            count, rendered, ids = middle, tried, tried_ids
        else:
            low = middle
    return Fitted(kept(count), rendered, ids, list[Mapping[str, Any]](msgs[first : cuts[count - 1]]))


def _first_turn(messages: list[dict[str, Any]]) -> int | None:
    """Where the oldest droppable turn starts: the first message past the leading system ones."""
    return next((i for i, m in enumerate(messages) if m.get("role") not in ("system", "developer")), None)


def _turn_cuts(messages: list[dict[str, Any]]) -> list[int]:
    """Dropping the ``k`` oldest turns removes ``messages[first : cuts[k - 1]]`` (see :func:`oldest_turn`)."""
    first = _first_turn(messages)
    if first is None:
        return []
    return [i for i, m in enumerate(messages) if i > first and m.get("role") == "user"]


def oldest_turn(messages: list[dict[str, Any]]) -> tuple[int, int] | None:
    """The [start, end) of the oldest whole turn that may be dropped, or None.

    A turn starts at a user message and runs to the next one, so an assistant's
    tool calls always leave together with their tool results. Leading system
    messages and the latest turn (the one being answered) are never dropped.
    """
    first, cuts = _first_turn(messages), _turn_cuts(messages)
    return None if first is None or not cuts else (first, cuts[0])
