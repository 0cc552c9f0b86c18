"""A format object's renderer of plain conversations without tools.

:meth:`ModelFormat.render` looks the format object up here first (one dictionary look-up,
before any other machinery): :func:`register` gave it the fast paths that rendered its plain
conversations before (fixed strings, skeletons, or both where the fixed strings cannot carry
a system message), so a call goes straight to them. Every call renders: nothing here keeps
a prompt to give back for a conversation seen before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["HOT", "register"]

_MAX_FORMATS = 256

Render = Callable[[Any, bool], "str | None"]

HOT: dict[int, tuple[Any, Render, str]] = {}
"""id(format) -> (the format, its renderer, which kinds it holds: ``layout``, ``skeleton`` or ``both``);
the format object is kept, so its id is not reused while it is here. With one kind the renderer is
that fast path itself (no wrapper to call through); with both, a closure tries one, then the other."""

def _pair(first: Render, then: Render) -> Render:
    """A closure (cheaper to call than an object) trying ``first``, then ``then``."""

    def both(messages: Any, add_generation_prompt: bool) -> str | None:
        text = first(messages, add_generation_prompt)
        return then(messages, add_generation_prompt) if text is None else text

    return both


def register(fmt: Any, render: Render, kind: str) -> None:
    """Give ``fmt`` its plain-conversation renderer: the first fast path that rendered for it
    (``kind``: ``layout`` or ``skeleton``), and the other kind too when it renders for it (the
    skeletons then first: they take the system messages those fixed strings could not)."""
    hot = HOT.get(id(fmt))
    if hot is not None and hot[0] is fmt:
        if hot[2] != kind and hot[2] != "both":
            other = hot[1]  # the first kind's own renderer
            pair = _pair(render, other) if kind == "skeleton" else _pair(other, render)
            HOT[id(fmt)] = (fmt, pair, "both")
        return
    if len(HOT) >= _MAX_FORMATS:
        HOT.clear()
    HOT[id(fmt)] = (fmt, render, kind)
