"""The last plain conversation each format object rendered, and its prompt: a repeated render is a comparison.

Callers render the same conversation more than once (to count its tokens, then to generate;
a retry; several samples of one prompt), and the fast paths still read every message again.
:func:`remember` keeps, per format object, a copy of the last conversation they rendered
without tools (plain ``{"role", "content"}`` dicts only: what the fast paths take) with the
generation-prompt flag, the day (for templates that print the date) and the prompt;
:func:`recall` gives that prompt back when the conversation given is equal to the copy, message
for message (exact dicts, compared by ``==`` in C: a changed, added or removed message, or one
edited in place, misses).  The copy is taken after the fast path rendered the conversation, so
what is given back is the prompt those strings made for equal text; nothing is rendered here.
"""

from __future__ import annotations

from typing import Any

from prompter.formats.skeleton import today

__all__ = ["recall", "remember"]

_MEMO: dict[int, tuple[Any, bool, Any, list[dict[str, str]], str]] = {}
"""id(format) -> (the format, add_generation_prompt, the day or None, the messages' copies, the prompt);
the format object is kept, so its id is not reused while it is here."""
_MAX_FORMATS = 256
_DICT = {dict}


def recall(fmt: Any, messages: Any, add_generation_prompt: bool) -> str | None:
    """The prompt remembered for ``messages`` (no tools), or None."""
    memo = _MEMO.get(id(fmt))
    if memo is None or memo[0] is not fmt or memo[1] is not add_generation_prompt or type(messages) is not list:
        return None
    copies = memo[3]
    if len(messages) != len(copies) or set(map(type, messages)) != _DICT or copies != messages:
        return None
    if memo[2] is not None and memo[2] != today():
        return None
    return memo[4]


def remember(fmt: Any, messages: list[dict[str, str]], add_generation_prompt: bool, text: str, dated: bool) -> str:
    """Keep ``text`` as the prompt of ``messages`` (plain dicts the fast path just rendered); return it."""
    if len(_MEMO) >= _MAX_FORMATS and id(fmt) not in _MEMO:
        _MEMO.clear()
    _MEMO[id(fmt)] = (fmt, add_generation_prompt, today() if dated else None, list(map(dict.copy, messages)), text)
    return text
