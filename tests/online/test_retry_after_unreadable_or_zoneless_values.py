"""``Retry-After`` read as RFC 9110 defines it and as the openai client falls back.

A ``retry-after-ms: nan`` (or ``inf``) is no delay at all: a valid ``Retry-After`` beside it decides.
Before, ``nan`` was returned as the delay, the policy refused it and fell back to backoff, so the
server's ``Retry-After: 3`` was ignored. An HTTP-date is always UTC; the ``-0000`` zone form (which
Python's email parser reads as "no zone") was taken as local time, off by the machine's UTC offset.
"""

from __future__ import annotations

import datetime

import pytest

from modules.online.retry import RetryPolicy, parse_retry_after

NOW = datetime.datetime(2015, 10, 21, 7, 28, tzinfo=datetime.timezone.utc).timestamp()


@pytest.mark.parametrize("ms", ["nan", "NaN", "inf", "-inf", "1e999"])
def test_an_unreadable_retry_after_ms_leaves_the_delay_to_retry_after(ms: str) -> None:
    headers = {"retry-after-ms": ms, "retry-after": "3"}
    assert parse_retry_after(headers) == 3.0
    assert RetryPolicy(sleep=[].append, random=lambda: 0.0).delay(0, headers) == 3.0


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_retry_after_that_is_no_finite_number_is_no_delay(value: str) -> None:
    assert parse_retry_after({"retry-after": value}) is None


@pytest.mark.parametrize(
    "date",
    ["Wed, 21 Oct 2015 07:28:05 -0000", "Wed, 21 Oct 2015 07:28:05 GMT", "Wed, 21 Oct 2015 07:28:05 +0000"],
    ids=["minus-zero", "gmt", "plus-zero"],
)
def test_an_http_date_is_read_as_utc_whatever_the_local_zone(date: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")  # UTC+9: local-time reading would be 9 hours off
    time.tzset()
    try:
        assert parse_retry_after({"Retry-After": date}, now=lambda: NOW) == pytest.approx(5.0)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_valid_retry_after_ms_still_wins() -> None:
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "3"}) == 1.5
