"""Strict JSON for request bodies: RFC 8259 only, and nesting bounded before anything walks it.

Python's ``json`` accepts more than JSON (``NaN``, ``Infinity``, duplicate keys,
floats that overflow to ``inf``) and raises ``ValueError`` or ``RecursionError``
on some inputs; here every one of those is a :class:`JSONProblem` whose message
says what is wrong, which the server answers with a 400.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

from modules.server.limits import MAX_NESTING
from prompter.strict_json import NotJSONError, no_constant, unique_pairs

__all__ = ["JSONProblem", "check_nesting", "lone_surrogate", "nesting", "strict_loads"]


class JSONProblem(ValueError):
    """A body (or a JSON string inside one) that is not strict JSON or is nested too deeply."""


# A string, escapes and all, written so that matching it never backtracks: runs of plain bytes between
# escapes (no quantifier inside a quantifier: the nested form took exponential time on an unterminated
# string, 3 s for 26 bytes), and a string left open runs to the end of the text (one match, where
# failing from each later quote was quadratic). The JSON parser names the syntax error afterwards.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_DROP = bytes(c for c in range(256) if c not in b"[]{}")


def nesting(raw: bytes | str) -> int:
    """The deepest level of arrays and objects in valid JSON text *raw* (``{}`` is 1, ``1`` is 0).

    Computed on the text, without recursion, so a body nested 100,000 levels
    costs one regular-expression pass and no stack.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    brackets = _STRING.sub(b"", data).translate(None, _DROP)
    if not brackets:
        return 0
    return max(accumulate(1 if b in b"[{" else -1 for b in brackets))


def check_nesting(raw: bytes | str, where: str) -> None:
    """Raise :class:`JSONProblem` if *raw* nests deeper than :data:`~modules.server.limits.MAX_NESTING`."""
    depth = nesting(raw)
    if depth > MAX_NESTING:
        raise JSONProblem(
            f"invalid JSON {where}: nested more than {MAX_NESTING} levels deep ({depth}); "
            f"the server's limit on JSON nesting is {MAX_NESTING} levels"
        )


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JSONProblem(f"the number {text[:40]} is too large for a float")
    return value


_MAX_INT_DIGITS = 4300  # Python's own limit on converting digits to an int (sys.get_int_max_str_digits)


def _integer(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > _MAX_INT_DIGITS:
        raise JSONProblem(f"an integer of {digits} digits is too long (at most {_MAX_INT_DIGITS})")
    return int(text)


def strict_loads(raw: bytes | str, where: str = "body") -> Any:
    """Parse *raw* as strict JSON nested at most :data:`~modules.server.limits.MAX_NESTING` levels.

    Raises :class:`JSONProblem` naming the fault and *where* it is (bad UTF-8,
    syntax with its line and column, ``NaN``, an overflowing number, a
    duplicate key, too deep).
    """
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise JSONProblem(f"invalid JSON {where}: not UTF-8 text") from None
    else:
        text = raw
    check_nesting(text, where)  # before parsing: nothing below recurses past the limit
    try:
        return json.loads(
            text,
            parse_constant=no_constant,
            parse_float=_finite,
            parse_int=_integer,
            object_pairs_hook=unique_pairs,
        )
    except json.JSONDecodeError as exc:
        raise JSONProblem(f"invalid JSON {where}: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (JSONProblem, NotJSONError) as exc:  # NaN or Infinity, a key given twice, a number too long
        raise JSONProblem(f"invalid JSON {where}: {exc}") from None
    except (ValueError, RecursionError) as exc:  # anything else json raises: still a 400 in words
        raise JSONProblem(f"invalid JSON {where}: {str(exc)[:200] or type(exc).__name__}") from None


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")


def lone_surrogate(raw: bytes | str, value: Any, root: str = "") -> tuple[str, str] | None:
    """Where *value* (the parse of *raw*) holds a lone surrogate, in a string or a key, and what to say.

    JSON spells one as ``"\\ud800"``; it is no Unicode text (RFC 8259 section 8.2, and I-JSON
    forbids it), so no tokenizer or template can take it. Returns ``(param, message)`` naming
    the first one (``messages[0].content``), or None. Costs one search of *raw* when there is none.
    *root* is where *raw* itself is (a JSON text inside a request's string), the start of every path.
    """
    if not _ESCAPED_SURROGATE.search(raw if isinstance(raw, str) else raw.decode("utf-8", "replace")):
        return None
    stack: list[tuple[str, Any]] = [(root, value)]
    while stack:  # nesting is already bounded; a stack all the same, and in document order
        where, item = stack.pop()
        if isinstance(item, str):
            found = _LONE.search(item)
            if found:
                at = f"a lone surrogate (U+{ord(found.group()):04X}) at character {found.start()}"
                return where, f"{where or 'body'}: {at} is not Unicode text; send the pair or remove it"
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(item))))
        elif isinstance(item, dict):
            for key in item:
                found = _LONE.search(key)
                if found:
                    what = f"the key {key[:100]!r} holds a lone surrogate (U+{ord(found.group()):04X})"
                    return where, f"{where or 'body'}: {what}, which is not Unicode text; send the pair or remove it"
            stack.extend((f"{where}.{k}" if where else k, v) for k, v in reversed(list(item.items())))
    return None
