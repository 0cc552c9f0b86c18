"""Backoff after many retries stays at ``max_delay``: ``initial_delay * 2.0**retry`` overflowed at the
1024th retry and escaped as a bare ``OverflowError`` (the openai client caps the exponent the same way)."""

from __future__ import annotations

from modules.online.retry import RetryPolicy


def test_backoff_after_a_thousand_retries_is_the_cap_not_an_overflow() -> None:
    policy = RetryPolicy(max_retries=10**9, random=lambda: 0.0)
    assert [policy.delay(n) for n in (1023, 1024, 5000, 10**9)] == [8.0, 8.0, 8.0, 8.0]


def test_a_huge_initial_delay_is_still_capped() -> None:
    policy = RetryPolicy(max_retries=10**6, initial_delay=1e300, max_delay=30.0, random=lambda: 0.0)
    assert policy.delay(2000) == 30.0
