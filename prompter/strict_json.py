"""JSON text read as JSON says, not as Python's ``json`` module allows.

``json.loads`` reads ``NaN`` and ``Infinity`` (no JSON value: every API refuses a body holding
them) and lets a repeated key's last value win. Tool-call arguments travel both as the caller's
text (OpenAI's dialects) and as the parsed object (Anthropic, Gemini, Ollama, local templates):
with a repeated key the two would say different things.

>>> strict_loads('{"city": "Paris"}')
{'city': 'Paris'}
>>> strict_loads('{"a": 1, "a": 2}')
Traceback (most recent call last):
...
prompter.strict_json.NotJSONError: the key 'a' appears twice in one object
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["NotJSONError", "no_constant", "strict_loads", "unique_pairs"]


class NotJSONError(ValueError):
    """Text Python's ``json`` reads that is no JSON: NaN or Infinity, or an object giving a key twice."""


def no_constant(name: str) -> Any:
    """``json.loads``'s ``parse_constant``: NaN, Infinity and -Infinity are refused."""
    raise NotJSONError(f"{name} is not a JSON value; send a number or a string")


def unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s ``object_pairs_hook``: an object giving a key twice is refused."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise NotJSONError(f"the key {key[:100]!r} appears twice in one object")
        out[key] = value
    return out


def strict_loads(text: str) -> Any:
    """``json.loads(text)``, refusing what JSON has no meaning for (:class:`NotJSONError`)."""
    return json.loads(text, parse_constant=no_constant, object_pairs_hook=unique_pairs)
