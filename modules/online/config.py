"""The values that configure a module's calls: the API key as a :class:`Secret`, the :class:`Timeout`, and
the check of caller-given ``headers=`` (:func:`check_headers`, for the constructor and ``with_options``).

``Secret`` and ``Timeout`` are re-exported by :mod:`modules.online.module`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modules.errors import ModuleConfigError
from modules.online.scrub import secrets_of_headers
from modules.online.sources import check_secret

__all__ = ["Secret", "Timeout", "check_headers", "check_kinds"]


def check_kinds(headers: object, generation: object, session: object, retry: object) -> None:
    """Refuse constructor arguments of the wrong kind at once, naming them: they raised a bare
    ``ValueError``/``AttributeError`` (a session or retry policy only at the first call)."""
    import requests

    from modules.online.retry import RetryPolicy

    for name, value in (("headers", headers), ("generation", generation)):
        if value is not None and not isinstance(value, Mapping):
            raise ModuleConfigError(f"{name}: expected a dict, got {type(value).__name__}")
    if session is not None and not isinstance(session, requests.Session):
        raise ModuleConfigError(f"session: expected a requests.Session, got {type(session).__name__}")
    if retry is not None and not isinstance(retry, RetryPolicy):
        raise ModuleConfigError(
            f"retry: expected a modules.online.retry.RetryPolicy, got {type(retry).__name__} "
            "(for a retry count alone, pass max_retries=...)"
        )


def check_headers(headers: Mapping[Any, Any]) -> None:
    """Refuse ``headers=`` that HTTP cannot carry as given, before anything is sent (the HTTP library raised
    a bare error, or one whose text held the value, or took a line break as the start of another header):
    a mapping of str names of visible ASCII to str values in Latin-1 with no line break or other control
    character. A credential header's value is checked as a key and named without being shown."""
    if not isinstance(headers, Mapping):
        raise ModuleConfigError(f"headers: expected a dict, got {type(headers).__name__}")
    for name, value in headers.items():
        if not isinstance(name, str) or not name or any(not "!" <= c <= "~" or c == ":" for c in name):
            shown = f"a name of type {type(name).__name__}"
            if isinstance(name, str):
                # only up to a ':' or space: a header line given as a name ("Authorization: Bearer sk-...") holds a key
                head = name.replace(":", " ").split(" ", 1)[0]
                shown = repr(name)[:60] if head == name else f"{head[:60]!r} followed by ':' or a space (not shown)"
            raise ModuleConfigError(f"headers: {shown} is not a header name (visible ASCII, no ':' or space)")
        if isinstance(value, str) and value in secrets_of_headers({name: value}):
            check_secret(value, f"headers[{name!r}]", spaces=True)
            continue
        if not isinstance(value, str):
            raise ModuleConfigError(f"headers[{name!r}]: expected a str value, got {type(value).__name__}")
        for i, char in enumerate(value):
            if (ord(char) < 32 and char != "\t") or ord(char) == 127 or ord(char) > 255:
                raise ModuleConfigError(
                    f"headers[{name!r}]: the value holds U+{ord(char):04X} at position {i}; a header value is "
                    "Latin-1 text without line breaks or control characters"
                )


class Secret:
    """A string that does not print itself: ``repr`` shows ``'***'`` and at most the last 4 characters.

    >>> Secret("sk-canary-0123456789abcd")
    '***abcd'
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret itself, for the one place that needs it (the Authorization header)."""
        return self._value

    def __repr__(self) -> str:
        tail = self._value[-4:] if len(self._value) >= 16 else ""
        return f"'***{tail}'"

    __str__ = __repr__

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Secret:
        return self

    def __reduce__(self) -> Any:
        raise TypeError("a Secret cannot be pickled: pass the key to the module in the other process")


@dataclass(frozen=True)
class Timeout:
    """Time limits, in seconds: ``connect`` per connection attempt, ``read`` between two bytes,
    ``total`` for the whole call (None: no deadline): every attempt, every wait between
    attempts, and reading the answer -- for a stream, to its last event. A server sending
    one byte just before each read timeout still cannot pass it.

    A bare number ``t`` given as ``timeout=`` means ``Timeout(connect=min(5, t), read=t, total=t)``.
    """

    connect: float = 5.0
    read: float = 120.0
    total: float | None = 600.0

    def __post_init__(self) -> None:
        for name in ("connect", "read", "total"):
            value = getattr(self, name)
            if value is None and name == "total":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < _LONGEST:
                raise ModuleConfigError(f"Timeout.{name}: {_SECONDS}, got {value!r}{_no_deadline(value)}")

    @classmethod
    def of(cls, value: float | Timeout | None) -> Timeout:
        """Normalise what ``timeout=`` accepts."""
        if value is None:
            return cls()
        if isinstance(value, Timeout):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < _LONGEST:
            return cls(connect=min(5.0, float(value)), read=float(value), total=float(value))
        raise ModuleConfigError(f"timeout: {_SECONDS} or a Timeout, got {value!r}{_no_deadline(value)}")


#: Seconds a timeout must stay under (about 115 days): a socket timeout far beyond it overflows.
_LONGEST = 1e7
_SECONDS = f"expected a number of seconds above 0 and below {_LONGEST:.0f} (about 115 days)"


def _no_deadline(value: object) -> str:
    """The remedy for a timeout too large to set: a caller who meant "no limit" wants no deadline."""
    too_long = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= _LONGEST
    return "; for no overall deadline pass timeout=Timeout(total=None)" if too_long else ""
