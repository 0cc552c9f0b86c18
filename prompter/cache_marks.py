"""Prompt-caching marks: ``cache_control`` on a content part or a tool, checked once and kept.

Anthropic caches a request's prefix up to each block that carries
``"cache_control": {"type": "ephemeral"}`` (with ``"ttl": "5m"`` or ``"1h"`` if wanted), four such
marks at most per request. A caller writes the mark on an OpenAI-shaped content part or tool dict,
as gateways that speak OpenAI's shape to Claude read it; prompter checks it where the part or tool
is read (:func:`cache_mark`) and keeps it. A mark on a whole message dict (LiteLLM's form) stands for one
on the message's last block:

* ``format="anthropic"`` puts it on the block made from that part (text, image, tool result; the
  system prompt becomes a list of text blocks when one of its parts is marked) and on the tool;
  a fifth mark is refused before anything is sent, as the API would refuse it;
* ``format="openai"`` sends the part and the tool with their mark, as given;
* the dialects whose APIs have no such field (Gemini, Ollama, Zhipu, DashScope's native protocol)
  refuse a marked part or tool, naming it, rather than drop what the caller asked for;
* a local model's chat template reads a marked part as any part (a part's keys beside its content never
  reach a template), and a tool as given, mark and all, as transformers' ``apply_chat_template`` does with
  the same dict: leave tools unmarked for a local model, whose engine keeps every prompt's opening anyway.

>>> cache_mark({"type": "ephemeral", "ttl": "1h"}, "messages[0].content[0].cache_control")
(('type', 'ephemeral'), ('ttl', '1h'))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prompter.errors import MessageError

__all__ = ["MAX_MARKS", "Mark", "cache_mark"]

Mark = tuple[tuple[str, str], ...]
"""A checked mark as ordered ``(key, value)`` pairs (hashable, like the parts that carry it); ``()``: none."""

MAX_MARKS = 4
"""Marks one Anthropic request may carry (its documented limit on cache breakpoints)."""

_TTLS = ("5m", "1h")


def cache_mark(value: Any, where: str) -> Mark:
    """*value* (a caller's ``cache_control``) as a :data:`Mark`; a :class:`~prompter.errors.MessageError`
    naming *where* unless it is ``{"type": "ephemeral"}`` with, at most, ``"ttl": "5m"`` or ``"1h"``."""
    wanted = "{'type': 'ephemeral'} (with 'ttl': '5m' or '1h' if wanted)"
    if not isinstance(value, Mapping):
        raise MessageError(f"{where}: expected {wanted}, got {type(value).__name__}")
    # read as plain strings: a str subclass's own __eq__ or __hash__ never decides what passes
    given = {_plain(key): val for key, val in value.items()}
    if any(key not in ("type", "ttl") for key in given) or len(given) != len(value):
        raise MessageError(f"{where}: expected {wanted}, got keys {sorted(repr(key)[:40] for key in given)}")
    if _plain(given.get("type")) != "ephemeral":
        raise MessageError(f"{where}.type: expected 'ephemeral' (the one kind), got {_shown(given.get('type'))}")
    if "ttl" not in given:
        return (("type", "ephemeral"),)
    ttl = _plain(given["ttl"])
    if ttl not in _TTLS:
        raise MessageError(f"{where}.ttl: expected '5m' or '1h', got {_shown(given['ttl'])}")
    return (("type", "ephemeral"), ("ttl", _TTLS[_TTLS.index(ttl)]))  # our own constant


def _plain(value: Any) -> Any:
    """*value*'s characters as a plain ``str`` when it is a str (of any subclass); anything else as it is."""
    return str.__str__(value) if isinstance(value, str) else value


def _shown(value: Any) -> str:
    return repr(_plain(value))[:40] if isinstance(value, (str, int, float, type(None))) else type(value).__name__

