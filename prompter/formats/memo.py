"""A format object's renderer of plain conversations without tools, and the last prompt it made.

:meth:`ModelFormat.render` looks the format object up here first (one dictionary look-up,
before any other machinery): :func:`register` gave it the fast paths that rendered its plain
conversations before (fixed strings, skeletons, or both where the fixed strings cannot carry
a system message), so a call goes straight to them.

Callers also render the same conversation more than once (to count its tokens, then to
generate; a retry; several samples of one prompt).  When a format object renders the same list
object twice in a row, the renderer keeps a copy of its messages (plain ``{"role", "content"}``
dicts only: what the fast paths take) with the generation-prompt flag, the day (for templates
that print the date) and the prompt, and gives that prompt back when that list is given again
and is still equal to the copy, message for message (exact dicts, compared by ``==`` in C: a
changed, added or removed message, or one edited in place, misses).  Other calls only note which
list they rendered, so conversations that never repeat pay no copy and no comparison.  What is
given back is the prompt the fast path made for equal text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["HOT", "register"]

_DICT = {dict}
_MAX_FORMATS = 256

Render = Callable[[Any, bool], "str | None"]
Today = Callable[[], Any]

HOT: dict[int, tuple[Any, Render, str, Callable[[Render, Today | None, bool], None]]] = {}
"""id(format) -> (the format, its renderer, the renderer's first kind, a setter of its second);
the format object is kept, so its id is not reused while it is here."""


def _renderer(render: Render, today: Today | None) -> tuple[Render, Callable[[Render, Today | None, bool], None]]:
    """A closure (cheaper to call than an object) over the fast paths and the memo."""
    other: Render | None = None
    last = 0  # id of the list rendered last
    memo: tuple[int, bool, Any, list[dict[str, str]], str] | None = None  # (id, add, day, copies, prompt)

    def hot(messages: Any, add_generation_prompt: bool) -> str | None:
        nonlocal last, memo
        key = id(messages)
        kept = memo
        if (
            kept is not None
            and kept[0] == key
            and kept[1] is add_generation_prompt
            and type(messages) is list
            and len(messages) == len(kept[3])
            and set(map(type, messages)) == _DICT
            and kept[3] == messages
            and (today is None or kept[2] == today())
        ):
            return kept[4]
        text = render(messages, add_generation_prompt)
        if text is None:
            if other is None:
                return None
            text = other(messages, add_generation_prompt)
            if text is None:
                return None
        if key == last:  # the same list twice in a row: keep a copy to compare the next call with
            day = None if today is None else today()
            memo = (key, add_generation_prompt, day, list(map(dict.copy, messages)), text)
        last = key
        return text

    def second(render2: Render, today2: Today | None, first: bool) -> None:
        nonlocal render, other, today, memo
        other, today, memo = render2, today or today2, None
        if first:
            render, other = other, render

    return hot, second


def register(fmt: Any, render: Render, today: Today | None, kind: str) -> None:
    """Give ``fmt`` its plain-conversation renderer: the first fast path that rendered for it
    (``kind``: ``layout`` or ``skeleton``), and the other kind too when it renders for it (the
    skeletons then first: they take the system messages those fixed strings could not)."""
    hot = HOT.get(id(fmt))
    if hot is not None and hot[0] is fmt:
        if hot[2] != kind and hot[2] != "both":  # the skeletons go first, as they took system messages before
            hot[3](render, today, kind == "skeleton")
            HOT[id(fmt)] = (fmt, hot[1], "both", hot[3])
        return
    if len(HOT) >= _MAX_FORMATS:
        HOT.clear()
    call, second = _renderer(render, today)
    HOT[id(fmt)] = (fmt, call, kind, second)
