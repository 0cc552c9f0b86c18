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

HOT: dict[int, tuple[Any, Render, str, Callable[[Render, bool], None]]] = {}
"""id(format) -> (the format, its renderer, the renderer's first kind, a setter of its second);
the format object is kept, so its id is not reused while it is here."""


def _renderer(render: Render) -> tuple[Render, Callable[[Render, bool], None]]:
    """A closure (cheaper to call than an object) over the fast paths."""
    other: Render | None = None

    def hot(messages: Any, add_generation_prompt: bool) -> str | None:
        text = render(messages, add_generation_prompt)
        if text is None and other is not None:
            text = other(messages, add_generation_prompt)
        return text

    def second(render2: Render, first: bool) -> None:
        nonlocal render, other
        other = render2
        if first:
            render, other = other, render

    return hot, second


def register(fmt: Any, render: Render, kind: str) -> None:
    """Give ``fmt`` its plain-conversation renderer: the first fast path that rendered for it
    (``kind``: ``layout`` or ``skeleton``), and the other kind too when it renders for it (the
    skeletons then first: they take the system messages those fixed strings could not)."""
    hot = HOT.get(id(fmt))
    if hot is not None and hot[0] is fmt:
        if hot[2] != kind and hot[2] != "both":  # the skeletons go first, as they took system messages before
            hot[3](render, kind == "skeleton")
            HOT[id(fmt)] = (fmt, hot[1], "both", hot[3])
        return
    if len(HOT) >= _MAX_FORMATS:
        HOT.clear()
    call, second = _renderer(render)
    HOT[id(fmt)] = (fmt, call, kind, second)
