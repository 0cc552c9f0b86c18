"""jinja's filters and tests, each sized or timed before it runs in a chat template.

Every filter of the environment is wrapped: the deadline is checked on entry, what it
returns is checked against the size caps, and a lazy result (``map``, ``select``) is
iterated under the deadline.  Filters that amplify, or walk their input in C where the
deadline cannot reach, get a predictor first (see :mod:`prompter.formats.budget`):

- ``sort``, ``dictsort``, ``unique``, ``groupby``, ``min``, ``max``: n log n times the
  heaviest item, under :data:`~prompter.formats.budget.MAX_WORK`;
- ``join``, ``replace``, ``indent``, ``wordwrap``, ``format``, ``tojson``, ``center``,
  ``xmlattr``, ``string`` and every filter that prints its input: the size of the result;
- ``batch``, ``slice``, ``list``, ``sum``: the number of items;
- ``title``, ``urlize``, ``wordcount``, ``striptags``, ``urlencode``, ``wordwrap`` walk text
  word by word in Python: at most :data:`SLOW_TEXT_CHARS` characters of input, and ``wordwrap``
  at most :data:`WRAP_COPIES` characters copied where it cuts long words;
- ``pprint``: at most :data:`PPRINT_CHARS` characters of ``repr``.

The comparison tests (``==``, ``in``, ``equalto``, ...) and the template's own
comparison operators go through :func:`compare`, which bounds their work the same way.

Why this file is long: each filter's predictor sits beside the table that installs it, so a
filter and its bound are read together; the predictors share the size helpers imported above.
"""

from __future__ import annotations

import functools
import json
import operator
import time
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from types import GeneratorType
from typing import Any

from prompter.errors import TemplateError
from prompter.formats.budget import (
    BUDGET,
    MAX_WORK,
    bounded_list,
    check_items,
    check_result,
    check_str,
    check_time,
    check_work,
    guarded_iter,
    max_chars,
    str_bound,
    weight,
)
from prompter.formats.sandbox_calls import check_percent, replace_size

__all__ = ["PPRINT_CHARS", "SLOW_TEXT_CHARS", "WRAP_COPIES", "compare", "install", "printable", "tojson"]

SLOW_TEXT_CHARS = 200_000
"""The most characters the word-by-word filters (``title``, ``urlize``, ...) may be given."""

PPRINT_CHARS = 65_536
"""The longest ``repr`` ``pprint`` may be asked to lay out."""

WRAP_COPIES = 300_000_000
"""The most characters ``wordwrap`` may copy cutting long words (in Python, where no deadline reaches)."""

MAX_INDENT = 1024
"""The widest indent a template may ask of ``tojson`` or ``indent``."""

_STRINGIFYING = frozenset(
    {"capitalize", "center", "e", "escape", "forceescape", "format", "indent", "lower", "replace", "safe",
     "string", "striptags", "title", "trim", "truncate", "upper", "urlencode", "urlize", "wordcount", "wordwrap"}
)
_SLOW_TEXT = frozenset({"title", "urlize", "wordcount", "striptags", "urlencode", "wordwrap"})
_ORDERING = frozenset({"sort", "dictsort", "unique", "groupby", "min", "max"})
_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)


def printable(value: Any) -> Any:
    """Refuse a value whose ``str()`` would be over the cap (a list of shared big strings)."""
    if type(value) is not str and type(value) not in _SCALAR_TYPES:
        check_str(str_bound(value), "prints a value")
    return value


def _value_index(func: Callable[..., Any]) -> int:
    return 1 if getattr(func, "jinja_pass_arg", None) is not None else 0


def _wrap(name: str, func: Callable[..., Any], before: Callable[..., None] | None) -> Callable[..., Any]:
    at = _value_index(func)
    stringifies = name in _STRINGIFYING

    @functools.wraps(func)
    def budgeted(*args: Any, **kwargs: Any) -> Any:
        budget = BUDGET.get()
        if budget is not None and time.monotonic() > budget.deadline:
            check_time()
        if len(args) > at:
            value = args[at]
            if stringifies:
                printable(value)
                if name in _SLOW_TEXT:
                    size = len(value) if isinstance(value, str) else str_bound(value)
                    if size > SLOW_TEXT_CHARS:
                        raise TemplateError(
                            f"chat template applies `{name}` to {size:,} characters; "
                            f"that filter takes at most {SLOW_TEXT_CHARS:,}"
                        )
            if before is not None:
                replaced = before(*args[at - 1 if name in _WITH_ENVIRONMENT else at :], **kwargs)
                if replaced is not None:  # the predictor materialised the input: use that
                    args = (*args[:at], replaced, *args[at + 1 :])
        result = func(*args, **kwargs)
        if type(result) is str and len(result) < 4096:
            return result  # the common case, kept cheap
        if isinstance(result, GeneratorType):
            return guarded_iter(result)
        return check_result(result)

    return budgeted


# -- predictors: each sees the filter's own arguments, raises or returns a materialised input ----


def _items_for_ordering(value: Any, *args: Any, **kwargs: Any) -> list[Any]:
    items = bounded_list(value.items() if isinstance(value, Mapping) else value, "orders a sequence")
    chars = 0
    for n, item in enumerate(items):
        chars += weight(item)
        if chars > MAX_WORK:
            break
        if not n & 1023:
            check_time()
    steps = max(1, len(items).bit_length())
    # one item is not compared, but ``unique`` hashes it, and a tuple's hash walks all of it
    check_work(chars * steps if len(items) > 1 else chars, "orders a sequence")
    return items


def _dictsort(value: Any, *args: Any, **kwargs: Any) -> None:
    _items_for_ordering(value)  # the dict itself goes on to the filter


def _join(value: Any, d: Any = "", attribute: Any = None) -> list[Any]:
    items = bounded_list(value, "joins a sequence")
    size = len(str(printable(d))) * max(len(items) - 1, 0)
    check_str(size, "joins text")
    for n, item in enumerate(items):
        if not n & 1023:
            check_time()
        if attribute is None:
            size += len(item) if isinstance(item, str) else str_bound(item)
        else:
            size += str_bound(item)  # the attribute is part of the item: an upper bound
        check_str(size, "joins text")
    return items


def _replace(s: Any, old: Any, new: Any, count: Any = None) -> None:
    printable(old)
    printable(new)
    check_str(replace_size(str(s), str(old), str(new), count or -1), "replaces text")


def _lines(s: str) -> int:
    return sum(s.count(c) for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029") + 2


def _indent(s: Any, width: Any = 4, first: bool = False, blank: bool = False) -> None:
    pad = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
    if pad > MAX_INDENT:
        raise TemplateError(f"chat template asked for an indent of {pad:,}, over {MAX_INDENT:,}")
    text = str(s)
    lines = _lines(text)
    check_items(lines, "indents text")
    check_str(len(text) + lines * (pad + 1), "indents text")


def _wordwrap(s: Any, width: Any = 79, break_long_words: bool = True, wrapstring: Any = None, *a: Any) -> None:
    text = str(s)
    extra = len(str(printable(wrapstring))) if wrapstring is not None else 2
    check_str(len(text) + (len(text) + 1) * extra, "wraps text")
    if break_long_words and isinstance(width, int) and width > 0:  # cut a line at a time, the rest copied each time
        copies = sum(len(w) * (len(w) // width) // 2 for w in text.split() if len(w) > width)
        if copies > WRAP_COPIES:
            raise TemplateError(f"chat template wraps long words at width {width}: about {copies:,} characters "
                                f"copied, over the cap of {WRAP_COPIES:,} (wrap wider, or break_long_words=false)")


def _printed_arguments(value: Any, *args: Any, **kwargs: Any) -> None:
    """A filter that calls ``str()`` on its arguments (``attr``'s name, ``urlize``'s target): each sized first."""
    for arg in (*args, *kwargs.values()):
        printable(arg)


def _escape(value: Any) -> None:
    if isinstance(value, str) and len(value) >= 4096:
        # ``<`` becomes ``&lt;``, ``"`` becomes ``&#34;``: up to five times the input
        grows = 3 * (value.count("<") + value.count(">")) + 4 * (value.count("&") + value.count("'") + value.count('"'))
        check_str(len(value) + grows, "escapes text")


def _center(value: Any, width: Any = 80) -> None:
    check_str(width if isinstance(width, int) else 0, "asked `center` for a width")


def _format(value: Any, *args: Any, **kwargs: Any) -> None:
    check_percent(str(value), kwargs or args)


def _batch(value: Any, linecount: Any = 0, fill_with: Any = None) -> None:
    if fill_with is not None and isinstance(linecount, int):
        check_items(linecount, "fills a batch")


def _slice(value: Any, slices: Any = 1, fill_with: Any = None) -> list[Any]:
    if isinstance(slices, int):
        check_items(slices, "slices a sequence")
    return bounded_list(value, "slices a sequence")


def _list(value: Any) -> list[Any]:
    return bounded_list(value, "builds a list")


def _reverse(value: Any) -> list[Any] | None:
    if isinstance(value, str):
        return None  # reversed as a string, and no bigger
    return bounded_list(value, "reverses a sequence")


def _pprint(value: Any) -> None:
    if str_bound(value, PPRINT_CHARS, quoted=True) > PPRINT_CHARS:
        raise TemplateError(f"chat template asked pprint to lay out more than {PPRINT_CHARS:,} characters")


def _xmlattr(d: Any, autospace: bool = True) -> None:
    if isinstance(d, Mapping):
        check_str(sum(str_bound(k) + 3 * str_bound(v) + 4 for k, v in d.items()), "builds xml attributes")


def _sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> list[Any]:
    items = bounded_list(iterable, "sums a sequence")
    values = items
    if attribute is not None:  # what is added up is each item's attribute, looked up in the sandbox
        from jinja2.filters import make_attrgetter

        getter = make_attrgetter(environment, attribute)
        values = [getter(item) for item in items]
    if not (isinstance(start, (int, float)) and all(isinstance(x, (int, float)) for x in values)):
        total: Any = start
        for item in values:  # what sum() would do, with the size of each partial sum checked first
            check_time()
            if isinstance(total, (list, tuple)) and isinstance(item, (list, tuple)):
                check_items(len(total) + len(item), "sums sequences")
            total = check_result(total + item)
    return items


_WITH_ENVIRONMENT = frozenset({"sum"})
"""Predictors given the environment first, as the filter is (to look attributes up in the sandbox)."""

_PREDICTORS: dict[str, Callable[..., Any]] = {
    "sort": _items_for_ordering,
    "unique": _items_for_ordering,
    "groupby": _items_for_ordering,
    "min": _items_for_ordering,
    "max": _items_for_ordering,
    "dictsort": _dictsort,
    "join": _join,
    "replace": _replace,
    "indent": _indent,
    "wordwrap": _wordwrap,
    "center": _center,
    "e": _escape,
    "escape": _escape,
    "forceescape": _escape,
    "format": _format,
    "batch": _batch,
    "slice": _slice,
    "list": _list,
    "reverse": _reverse,
    "pprint": _pprint,
    "xmlattr": _xmlattr,
    "sum": _sum,
    "attr": _printed_arguments,
    "urlize": _printed_arguments,
}


# -- tojson ------------------------------------------------------------------------------------


def _json_bound(value: Any, indent: int, depth: int, memo: dict[tuple[int, int], int]) -> int:
    if isinstance(value, str):
        return 6 * len(value) + 2
    if not isinstance(value, (list, tuple, dict)):
        return 64
    key = (id(value), depth)
    if key in memo:
        return memo[key]
    line = (depth + 1) * indent + 3
    items = [x for kv in value.items() for x in kv] if isinstance(value, dict) else value
    total = 2 + depth * indent
    limit = max_chars()
    for n, item in enumerate(items):
        total += line + _json_bound(item, indent, depth + 1, memo)
        if total > limit:
            break
        if not n & 1023:
            check_time()
    memo[key] = total
    return total


def tojson(
    x: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """The ``tojson`` filter of transformers: ``json.dumps`` without HTML escaping, sized first."""
    width = len(indent) if isinstance(indent, str) else indent if isinstance(indent, int) else 0
    if width > MAX_INDENT:
        raise TemplateError(f"chat template asked tojson for an indent of {indent!r}")
    sep = separators if isinstance(separators, tuple) else (", ", ": ")
    extra = sum(len(s) for s in sep if isinstance(s, str))
    check_str(_json_bound(x, width + extra, 0, {}), "serialises JSON")
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


# -- comparisons -------------------------------------------------------------------------------

_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "lteq": operator.le,
    "gt": operator.gt,
    "gteq": operator.ge,
    "in": lambda a, b: a in b,
    "notin": lambda a, b: a not in b,
}


def _contains(a: Any, b: Any) -> bool:
    """``a in b``, its work sized first: each item compared with ``a`` may walk all of ``a``
    (its expanded size: a structure of shared halves sixty deep is 2**60 items to C)."""
    if isinstance(b, (list, tuple)):
        if len(b) > 64 or not isinstance(a, _SCALARS):
            check_work(len(b) * weight(a), "searches a sequence")
        return a in b
    if isinstance(a, _SCALARS) or isinstance(b, (str, bytes)):
        return a in b
    if isinstance(b, (Mapping, AbstractSet)):  # looked up by hash: hashing a tuple walks all of it
        check_work(weight(a), "looks a value up by its hash")
        return a in b
    # any other iterable (``.values()``, a lazy filter): compared item by item, as ``in`` would
    each = weight(a)
    work = 0
    for item in guarded_iter(b):
        work += each
        check_work(work, "searches a sequence")
        if item is a or item == a:
            return True
    return False


def _compare_one(op: str, a: Any, b: Any) -> Any:
    if type(a) in _SCALAR_TYPES and type(b) in _SCALAR_TYPES:
        return _OPS[op](a, b)
    if op == "in":
        return _contains(a, b)
    if op == "notin":
        return not _contains(a, b)
    if isinstance(a, (list, tuple, dict)) and isinstance(b, (list, tuple, dict)):
        check_work(min(weight(a), weight(b)), "compares two sequences")
    return _OPS[op](a, b)


def compare(left: Any, op: str, right: Any, *chain: Any) -> Any:
    """``left op right op2 right2 ...`` with each comparison's work bounded first."""
    if not chain and type(left) in _SCALAR_TYPES and type(right) in _SCALAR_TYPES:
        return _OPS[op](left, right)  # the common case, kept cheap: ``message.role == 'user'``
    chain = (op, right, *chain)
    for n in range(0, len(chain), 2):
        op, right = chain[n], chain[n + 1]
        result = _compare_one(op, left, right)
        if n + 2 >= len(chain) or not result:
            return result
        left = right
    return True


_TEST_OPS = {"==": "eq", "eq": "eq", "equalto": "eq", "!=": "ne", "ne": "ne", "<": "lt", "lt": "lt",
             "lessthan": "lt", "<=": "lteq", "le": "lteq", ">": "gt", "gt": "gt", "greaterthan": "gt",
             ">=": "gteq", "ge": "gteq", "in": "in"}


def _test(op: str) -> Callable[[Any, Any], Any]:
    def test(a: Any, b: Any) -> Any:
        check_time()  # ``select('equalto', x)`` runs this per item and may yield nothing for minutes
        return _compare_one(op, a, b)

    return test


def _printing_test(func: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A test that calls ``str()`` on its value (``lower``, ``upper``): the value sized first."""

    @functools.wraps(func)
    def test(value: Any) -> Any:
        check_time()
        return func(printable(value))

    return test


def install(filters: dict[str, Any], tests: dict[str, Any]) -> None:
    """Replace the environment's filter and test tables with their budgeted versions."""
    filters["tojson"] = tojson
    for name, func in list(filters.items()):
        filters[name] = _wrap(name, func, _PREDICTORS.get(name))
    for name, op in _TEST_OPS.items():
        tests[name] = _test(op)
    for name in ("lower", "upper"):
        tests[name] = _printing_test(tests[name])
