"""Method calls and string formatting inside a chat template, sized before they run.

A template reaches Python's own ``str``, ``bytes``, ``int`` and ``list`` methods
(``'x'.center(n)``, ``s.replace(a, b)``, ``', '.join(xs)``, ``'{:>{w}}'.format(...)``,
``'%*d' % (w, 1)``).  Each amplifying one is given a predictor here that computes the
size of the result from the operands and refuses it (:class:`TemplateError`) before
CPython allocates anything; see :mod:`prompter.formats.budget` for the caps.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from typing import Any

from prompter.formats.budget import (
    MAX_ITEMS,
    bounded_list,
    check_items,
    check_key,
    check_result,
    check_str,
    check_work,
    max_chars,
    str_bound,
    weight,
)

__all__ = ["BoundedFormatterMixin", "TemplateDict", "bounded_method_call", "check_percent", "dict_key", "keys_list"]

_SCALARS = (str, bytes, int, float, type(None))

_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


def _int_arg(args: tuple[Any, ...], kwargs: Mapping[str, Any], pos: int, name: str, default: Any) -> Any:
    if len(args) > pos:
        return args[pos]
    return kwargs.get(name, default)


def _width(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _pad(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    check_str(_width(_int_arg(args, kwargs, 0, "width", 0)), f"asked {method.__name__} for a width")
    return method(*args, **kwargs)


def _expandtabs(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    tab = "\t" if isinstance(s, str) else b"\t"
    size = _width(_int_arg(args, kwargs, 0, "tabsize", 8))
    check_str(len(s) + s.count(tab) * size, "expands tabs")
    return method(*args, **kwargs)


def _replace(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    old, new = _int_arg(args, kwargs, 0, "old", None), _int_arg(args, kwargs, 1, "new", None)
    count = _int_arg(args, kwargs, 2, "count", -1)
    if isinstance(old, type(s)) and isinstance(new, type(s)) and isinstance(count, int):
        check_str(replace_size(s, old, new, count), "replaces text")
    return method(*args, **kwargs)


def replace_size(s: Any, old: Any, new: Any, count: int = -1) -> int:
    """``len(s.replace(old, new, count))``, computed with ``count`` (linear, no allocation)."""
    if len(new) <= len(old):
        return len(s)
    occurrences = s.count(old) if old else len(s) + 1
    if count >= 0:
        occurrences = min(occurrences, count)
    return len(s) + occurrences * (len(new) - len(old))


def _join(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if len(args) != 1 or kwargs:
        return method(*args, **kwargs)
    items = bounded_list(args[0], "joins a sequence")
    size = len(s) * max(len(items) - 1, 0)
    for item in items:
        size += len(item) if isinstance(item, (str, bytes)) else 0
    check_str(size, "joins text")
    return method(items)


def _split(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    maxsplit = _int_arg(args, kwargs, 1, "maxsplit", -1)
    if not isinstance(maxsplit, int) or 0 <= maxsplit < MAX_ITEMS:
        return method(*args, **kwargs)
    sep = _int_arg(args, kwargs, 0, "sep", None)
    # at most MAX_ITEMS splits: the same list when it is within the cap, refused when not
    parts = method(sep, MAX_ITEMS)
    check_items(len(parts), "splits text")
    return parts


def _splitlines(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if len(s) > MAX_ITEMS:
        breaks = sum(s.count(c) for c in _LINE_BREAKS) if isinstance(s, str) else s.count(b"\n") + s.count(b"\r")
        check_items(breaks + 1, "splits text into lines")
    return method(*args, **kwargs)


def _translate(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    table = _int_arg(args, kwargs, 0, "table", None)
    if isinstance(s, str) and isinstance(table, Mapping):
        longest = max((len(v) for v in table.values() if isinstance(v, str)), default=1)
        if len(s) * longest > max_chars():
            size = len(s) + sum(s.count(chr(k)) * (len(v) - 1) for k, v in _str_entries(table))
            check_str(size, "translates text")
    return method(*args, **kwargs)


def _str_entries(table: Mapping[Any, Any]) -> list[tuple[int, str]]:
    check_items(len(table) * 64, "translates through a table")  # one count() per entry: keep it small
    return [(k, v) for k, v in table.items() if isinstance(k, int) and isinstance(v, str) and 0 <= k < 0x110000]


def _maketrans(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    for arg in args:
        if isinstance(arg, (str, bytes, dict)):
            check_items(len(arg), "builds a translation table")
    return method(*args, **kwargs)


def _to_bytes(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    check_str(_width(_int_arg(args, kwargs, 0, "length", 1)), "asked int.to_bytes for a length")
    return method(*args, **kwargs)


def _seq_search(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    # each item compared may walk all of the value searched for (a structure of shared halves: its
    # expanded size), so a short list counts too when that value is itself a container
    if args and (len(s) > 64 or not isinstance(args[0], _SCALARS)):
        check_work(len(s) * weight(args[0]), f"searches a list with {method.__name__}")
    return method(*args, **kwargs)


def keys_list(keys: Any) -> list[Any]:
    """The keys ``dict.fromkeys`` is given, as a list, each one's hash sized first."""
    items = bounded_list(keys, "builds a dict")
    for key in items:
        check_key(key, "builds a dict with a tuple key")
    return items


def _fromkeys(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if args:
        args = (keys_list(args[0]), *args[1:])
    return method(*args, **kwargs)


def _dict_get(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if args:
        check_key(args[0], "looks an item up by a tuple")
    return method(*args, **kwargs)


def _loop_changed(method: Callable[..., Any], s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    # ``loop.changed(x)`` compares x with the previous one in C: size that comparison first
    check_work(sum(weight(a) for a in args), "compares with loop.changed")
    return method(*args, **kwargs)


class TemplateDict:
    """``dict`` as templates see it: a constructor without attribute access to the type."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        if args and not isinstance(args[0], Mapping):
            args = (bounded_list(args[0], "builds a dict"), *args[1:])
            for pair in args[0]:
                if isinstance(pair, (list, tuple)) and pair:
                    check_key(pair[0], "builds a dict with a tuple key")
        return check_result(dict(*args, **kwargs))  # type: ignore[no-any-return]

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        if args:
            args = (keys_list(args[0]), *args[1:])
        return check_result(dict.fromkeys(*args, **kwargs))  # type: ignore[no-any-return]


def dict_key(key: Any) -> Any:
    """A key of a ``{key: value}`` literal, its hash sized first."""
    check_key(key, "builds a dict with a tuple key")
    return key


_STATIC_MAKETRANS = (str.maketrans, bytes.maketrans, bytearray.maketrans)

_Handler = Callable[[Callable[..., Any], Any, tuple[Any, ...], dict[str, Any]], Any]

_TEXT_METHODS: dict[str, _Handler] = {
    "center": _pad,
    "ljust": _pad,
    "rjust": _pad,
    "zfill": _pad,
    "expandtabs": _expandtabs,
    "replace": _replace,
    "join": _join,
    "split": _split,
    "rsplit": _split,
    "splitlines": _splitlines,
    "translate": _translate,
    "maketrans": _maketrans,
}


def bounded_method_call(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[bool, Any]:
    """Call ``obj`` if it is a builtin method that can amplify, after sizing it: ``(handled, result)``."""
    owner = getattr(obj, "__self__", None)
    name = getattr(obj, "__name__", "")
    handler: _Handler | None = None
    if isinstance(owner, (str, bytes)) or owner in (str, bytes):
        handler = _TEXT_METHODS.get(name)
    elif obj in _STATIC_MAKETRANS:  # ``''.maketrans`` is a static method: no __self__ to go by
        handler = _maketrans
    elif isinstance(owner, int) and name == "to_bytes":
        handler = _to_bytes
    elif isinstance(owner, (list, tuple)) and name in ("count", "index"):
        handler = _seq_search
    elif name == "fromkeys":
        handler = _fromkeys
    elif isinstance(owner, Mapping) and name == "get":
        handler = _dict_get
    elif name == "changed" and type(owner).__name__ == "LoopContext":
        handler = _loop_changed
    if handler is None:
        return False, None
    # jinja's Context.call drops the loop and block variables it threads through calls; so do we
    kwargs = {k: v for k, v in kwargs.items() if k not in ("_loop_vars", "_block_vars")}
    return True, handler(obj, owner, args, kwargs)


# -- str.format --------------------------------------------------------------------------------

_SPEC_NUMBERS = re.compile(r"\d+")


class BoundedFormatterMixin(string.Formatter):
    """``str.format`` fields sized one by one, after nested fields are filled, before formatting."""

    _size = 0

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion in ("r", "a", "s"):
            self._grow(str_bound(value, quoted=conversion != "s"))
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        size = 0
        for digits in _SPEC_NUMBERS.findall(format_spec):  # width and precision, whoever wrote them
            if len(digits) > 9:
                check_str(10**9, "formats with a huge width")
            size += int(digits)
        size += str_bound(value) if not isinstance(value, (int, float)) else 64
        self._grow(size)
        return super().format_field(value, format_spec)

    def _grow(self, size: int) -> None:
        self._size += size
        check_str(self._size, "formats a string")


# -- printf-style % ----------------------------------------------------------------------------

_PERCENT = re.compile(r"%(?:\(([^)]*)\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)", re.S)


def check_percent(template: str, right: Any) -> None:
    """``template % right``: the size of the result from widths, precisions and arguments."""
    positional = list(right) if isinstance(right, tuple) else [right]
    mapping = right if isinstance(right, Mapping) else None
    size = len(template)
    memo: dict[int, int] = {}
    for match in _PERCENT.finditer(template):
        key, width, precision, conversion = match.groups()
        if conversion == "%":
            continue
        for number in (width, precision):
            if number == "*":
                star = positional.pop(0) if positional else 0
                size += abs(star) if isinstance(star, int) else 0
            elif number:
                if len(number) > 9:
                    check_str(10**9, "formats with a huge width")
                size += int(number)
        if key is not None and mapping is not None:
            value = mapping.get(key)
        else:
            value = positional.pop(0) if positional else None
        if id(value) not in memo:
            memo[id(value)] = str_bound(value, quoted=conversion in "ra")
        size += memo[id(value)]
        check_str(size, "formats a string with %")
