"""A format object's renderer of plain conversations without tools, and the last prompt it made.

:meth:`ModelFormat.render` looks the format object up here first (one dictionary look-up,
before any other machinery): :class:`Hot` holds the fast path that rendered its plain
conversations before (fixed strings or the skeletons, registered by
:mod:`~prompter.formats.fixed`), so a call goes straight to it.

Callers also render the same conversation more than once (to count its tokens, then to
generate; a retry; several samples of one prompt).  When a format object renders the same list
object twice in a row, :class:`Hot` keeps a copy of its messages (plain ``{"role", "content"}``
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

__all__ = ["HOT", "Hot", "register"]

_DICT = {dict}
_MAX_FORMATS = 256

Today = Callable[[], Any]


class Hot:
    """The plain-conversation renderer of one format object, and its memo."""

    __slots__ = ("kind", "last", "memo", "other", "render", "today")

    def __init__(self, render: Callable[[Any, bool], str | None], today: Today | None, kind: str) -> None:
        self.render = render
        self.kind = kind
        """``layout`` (fixed strings) or ``skeleton``."""
        """The fast path: ``(messages, add_generation_prompt) -> prompt``, or None where it does not apply."""
        self.other: Callable[[Any, bool], str | None] | None = None
        """The other fast path, tried when the first does not apply (the skeletons of a template
        whose fixed strings cannot carry a system message: Gemma, Mistral v0.1)."""
        self.today = today
        """For a template that prints the date: the function giving today's (the memo keeps the day)."""
        self.last = 0
        """``id`` of the list rendered last."""
        self.memo: tuple[int, bool, Any, list[dict[str, str]], str] | None = None
        """``(id of the list, add_generation_prompt, day or None, copies of its messages, prompt)``."""

    def __call__(self, messages: Any, add_generation_prompt: bool) -> str | None:
        key = id(messages)
        memo = self.memo
        if (
            memo is not None
            and memo[0] == key
            and memo[1] is add_generation_prompt
            and type(messages) is list
            and len(messages) == len(memo[3])
            and set(map(type, messages)) == _DICT
            and memo[3] == messages
            and (memo[2] is None or self.today is None or memo[2] == self.today())
        ):
            return memo[4]
        text = self.render(messages, add_generation_prompt)
        if text is None and self.other is not None:
            text = self.other(messages, add_generation_prompt)
        if text is not None:
            if key == self.last:  # the same list twice in a row: keep a copy to compare the next call with
                day = None if self.today is None else self.today()
                self.memo = (key, add_generation_prompt, day, list(map(dict.copy, messages)), text)
            self.last = key
        return text


HOT: dict[int, tuple[Any, Hot]] = {}
"""id(format) -> (the format, its renderer); the format object is kept, so its id is not reused."""


def register(fmt: Any, render: Callable[[Any, bool], str | None], today: Today | None, kind: str) -> None:
    """Give ``fmt`` its plain-conversation renderer: the first fast path that rendered for it, and
    the other kind (``layout`` or ``skeleton``) as the second when it renders for it too."""
    hot = HOT.get(id(fmt))
    if hot is not None and hot[0] is fmt:
        first = hot[1]
        if first.other is None and first.kind != kind:
            first.other = render
            first.today = first.today or today
        return
    if len(HOT) >= _MAX_FORMATS:
        HOT.clear()
    HOT[id(fmt)] = (fmt, Hot(render, today, kind))
