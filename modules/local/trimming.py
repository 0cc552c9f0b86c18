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
    """
    msgs = list(messages)
    budget = max_context - max_new_tokens
    dropped: list[Mapping[str, Any]] = []
    while True:
        rendered, ids = encode(msgs)
        if len(ids) <= budget:
            break
        if budget < 1:  # no trimming can help
            raise ContextLengthError(len(ids), max_new_tokens, max_context, "max_new_tokens alone fills the context")
        turn = oldest_turn(msgs) if trim == "oldest" else None
        if turn is None:
            remedy = (
                "even the latest turn alone does not fit"
                if trim
                else "shorten the input or history, lower max_new_tokens, or pass trim='oldest'"
            )
            raise ContextLengthError(len(ids), max_new_tokens, max_context, remedy)
        dropped += msgs[turn[0] : turn[1]]
        del msgs[turn[0] : turn[1]]
    return Fitted(msgs, rendered, ids, dropped)


def oldest_turn(messages: list[dict[str, Any]]) -> tuple[int, int] | None:
    """The [start, end) of the oldest whole turn that may be dropped, or None.

    A turn starts at a user message and runs to the next one, so an assistant's
    tool calls always leave together with their tool results. Leading system
    messages and the latest turn (the one being answered) are never dropped.
    """
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    first = next((i for i, m in enumerate(messages) if m.get("role") not in ("system", "developer")), None)
    if not users or first is None or first >= users[-1]:
        return None
    end = next(i for i in range(first + 1, len(messages)) if messages[i].get("role") == "user")
    return first, end
