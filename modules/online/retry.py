"""When to retry a failed request, and how long to wait: the official openai client's policy.

:class:`RetryPolicy` is plain data plus three pure decisions, so it can be
tested without a network or a clock:

- **What is retried** (:meth:`RetryPolicy.should_retry`): connection errors
  and timeouts, and the statuses 408, 409, 429 and >= 500. An
  ``x-should-retry: true`` / ``false`` response header overrides the status.
- **How long to wait** (:meth:`RetryPolicy.delay`): the server's
  ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date) when it is
  between 0 and ``max_retry_after`` (60 s); otherwise exponential backoff,
  ``initial_delay * 2**retry`` capped at ``max_delay`` (0.5 s, 1 s, 2 s ... 8 s),
  shortened by up to 25 % of random jitter so clients do not retry in step.
- **How often**: ``max_retries`` (2) retries after the first attempt.

What is never retried is decided by the module, not here: once any byte of
a stream has reached the caller, a failure raises instead of retrying.

``sleep``, ``clock`` and ``random`` are injectable so tests check the delays
exactly, without waiting:

>>> policy = RetryPolicy(sleep=[].append, random=lambda: 0.0)
>>> policy.delay(0), policy.delay(1), policy.delay(5), policy.delay(0, {"Retry-After": "3"})
(0.5, 1.0, 8.0, 3.0)
>>> policy.should_retry(429), policy.should_retry(400), policy.should_retry(400, {"x-should-retry": "true"})
(True, False, True)
"""

from __future__ import annotations

import datetime
import email.utils
import math
import random as _random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from modules.errors import ModuleConfigError

__all__ = ["RETRYABLE_STATUSES", "RetryPolicy", "parse_retry_after"]

#: Statuses retried by default: request timeout, conflict, rate limit (and every 5xx).
RETRYABLE_STATUSES = frozenset({408, 409, 429})

_MAX_EXPONENT = 1000  # backoff doubles at most this many times (the openai client's cap on its retry count)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:  # a plain dict from a test: look case-insensitively
        lname = name.lower()
        for key, val in headers.items():
            if key.lower() == lname:
                return val
    return value


def parse_retry_after(headers: Mapping[str, str], now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asks us to wait, from ``retry-after-ms`` or ``Retry-After``; None if absent.

    ``Retry-After`` may be seconds (``"2"``, ``"1.5"``) or an HTTP date
    (``"Wed, 21 Oct 2015 07:28:00 GMT"``, always UTC), read against ``now()``. A value that is not a
    finite number (``nan``) is unreadable: ``retry-after-ms: nan`` leaves the decision to ``Retry-After``.
    An unreadable ``Retry-After`` (not a number, nor a date Python can hold) is None: the backoff decides.
    """
    ms = _number(_header(headers, "retry-after-ms"))
    if ms is not None:
        return ms / 1000.0
    value = _header(headers, "retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:  # a field too large for the C types ("21 Oct 99999999999999999999") overflows: unreadable too
        when = email.utils.parsedate_to_datetime(value.strip())
        if when is None:
            return None
        if when.tzinfo is None:  # "-0000" (or no zone): an HTTP-date is always UTC (RFC 9110, 5.6.7), not local
            when = when.replace(tzinfo=datetime.timezone.utc)
        stamp = when.timestamp()
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        return None
    return stamp - now()


def _number(value: str | None) -> float | None:
    """A header's finite number; None when absent or unreadable (``nan`` and ``inf`` say no delay, so the
    next header, or the backoff, decides)."""
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


@dataclass(frozen=True)
class RetryPolicy:
    """How a module retries: counts, delays, and the clock and sleep it uses.

    Fields: ``max_retries`` retries after the first attempt; backoff starts at
    ``initial_delay`` seconds, doubles, and is capped at ``max_delay``; a
    server's ``Retry-After`` is honoured when ``0 < value <= max_retry_after``;
    ``sleep(seconds)``, ``clock()`` (monotonic seconds, for the total deadline),
    ``wall_clock()`` (epoch seconds, for HTTP-date ``Retry-After``) and
    ``random()`` (in [0, 1), for jitter) are injectable.
    """

    max_retries: int = 2
    initial_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    sleep: Callable[[float], object] = field(default=time.sleep, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    wall_clock: Callable[[], float] = field(default=time.time, repr=False)
    random: Callable[[], float] = field(default=_random.random, repr=False)

    def __post_init__(self) -> None:
        if type(self.max_retries) is not int or self.max_retries < 0:
            raise ModuleConfigError(f"max_retries must be a whole number >= 0, got {self.max_retries!r}")
        for name, infinite in (("initial_delay", False), ("max_delay", False), ("max_retry_after", True)):
            value = getattr(self, name)  # max_retry_after may be inf: honour any Retry-After
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= math.inf:
                raise ModuleConfigError(f"RetryPolicy.{name}: expected a number of seconds >= 0, got {value!r}")
            if value == math.inf and not infinite:
                raise ModuleConfigError(f"RetryPolicy.{name}: expected a finite number of seconds, got {value!r}")
        for name in ("sleep", "clock", "wall_clock", "random"):
            function = getattr(self, name)
            if not callable(function):
                raise ModuleConfigError(f"RetryPolicy.{name}: expected a function, got {type(function).__name__}")

    def should_retry(self, status: int | None, headers: Mapping[str, str] | None = None) -> bool:
        """Whether a failure is worth retrying (ignoring how many retries are left).

        ``status`` None means the request never got an answer (connection
        error, timeout): retried. Otherwise ``x-should-retry`` decides if
        present, then the status.
        """
        if headers:
            hint = _header(headers, "x-should-retry")
            if hint is not None:
                if hint.strip().lower() == "true":
                    return True
                if hint.strip().lower() == "false":
                    return False
        if status is None:
            return True
        return status in RETRYABLE_STATUSES or status >= 500

    def delay(self, retry: int, headers: Mapping[str, str] | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0 for the first retry)."""
        if headers:
            asked = parse_retry_after(headers, self.wall_clock)
            if asked is not None and 0 < asked <= self.max_retry_after:
                return asked
        # the exponent is capped as the openai client caps it: 2.0**1024 overflows, and the cap is reached long before
        backoff = min(self.initial_delay * (2.0 ** min(retry, _MAX_EXPONENT)), self.max_delay)
        jitter = 1.0 - 0.25 * self.random()
        return max(backoff * jitter, 0.0)
