"""A server's number too large for Python's C types never escapes as a bare ``OverflowError`` or ``ValueError``.

``Retry-After: Wed, 21 Oct 99999999999999999999 07:28:00 GMT`` (or a huge hour, minute, second or day) made
``email.utils.parsedate_to_datetime`` raise ``OverflowError`` out of the call. An unreadable ``Retry-After``
is skipped: the backoff decides the wait, and a call that runs out of retries raises the usual
:class:`RateLimitError`. The same holds for the other numbers a server sends that are parsed:

- an SSE ``retry:`` field of digits ``int()`` does not read (``"²"``, which ``str.isdigit`` accepts, or
  more than 4300 digits) broke the stream with ``ValueError``; it is ignored, as the spec says;
- a ``/completions`` logprob written as an integer too large for a float (``1`` and 400 zeros) raised
  ``OverflowError`` from ``math.isfinite``; it is an :class:`APIResponseValidationError` naming it.
"""

from __future__ import annotations

import pytest
from fault_server import FaultServer, Reply, Stream, sse_events

from modules import OnlineChatModule
from modules.errors import APIResponseValidationError, RateLimitError
from modules.online.retry import RetryPolicy, parse_retry_after
from modules.online.sse import SSEDecoder

HUGE = "99999999999999999999"
DATES = [
    f"Wed, 21 Oct {HUGE} 07:28:00 GMT",
    f"Wed, 21 Oct 2015 {HUGE}:28:00 GMT",
    f"Wed, 21 Oct 2015 07:{HUGE}:00 GMT",
    f"Wed, 21 Oct 2015 07:28:{HUGE} GMT",
    f"Wed, {HUGE} Oct 2015 07:28:00 GMT",
    f"Wed, 21 Oct 2015 07:28:00 +{HUGE}",
]


@pytest.mark.parametrize("value", DATES, ids=["year", "hour", "minute", "second", "day", "zone"])
def test_an_overflowing_http_date_is_unreadable(value: str) -> None:
    assert parse_retry_after({"Retry-After": value}) is None
    policy = RetryPolicy(sleep=[].append, random=lambda: 0.0)
    assert policy.delay(0, {"Retry-After": value}) == 0.5  # the backoff
    assert policy.delay(0, {"retry-after-ms": "nan", "Retry-After": value}) == 0.5


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


def test_a_rate_limit_with_an_overflowing_retry_after_backs_off_then_raises_the_typed_error(server) -> None:
    busy = Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": DATES[0]})
    server.script[:] = [busy, busy]
    before = server.attempts
    waits: list[float] = []
    m = OnlineChatModule(
        base_url=server.base_url, model="m", api_key="sk-test", retry=RetryPolicy(1, sleep=waits.append, random=lambda: 0)
    )
    with pytest.raises(RateLimitError, match="slow down"):
        m("hi")
    m.close()
    assert waits == [0.5]  # the backoff's first wait: the header was skipped
    assert server.attempts - before == 2


def test_a_rate_limit_with_an_overflowing_retry_after_is_retried_to_an_answer(server) -> None:
    server.script[:] = [Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": DATES[1]})]
    waits: list[float] = []
    m = OnlineChatModule(
        base_url=server.base_url, model="m", api_key="sk-test", retry=RetryPolicy(sleep=waits.append, random=lambda: 0)
    )
    assert m("hi") == "ok"
    m.close()
    assert waits == [0.5]


@pytest.mark.parametrize("field", ["²", "٣", "1" * 5000], ids=["superscript", "arabic-indic", "5000-digits"])
def test_an_sse_retry_field_that_int_cannot_read_is_ignored(server, field: str) -> None:
    events = sse_events("Hello there")
    events[1] = f"retry: {field}\n".encode() + events[1]
    server.script[:] = [Stream(events)]
    m = OnlineChatModule(base_url=server.base_url, model="m", api_key="sk-test", retry=RetryPolicy(max_retries=0))
    assert "".join(m.stream("hi")) == "Hello there"
    m.close()
    decoder = SSEDecoder(max_line=1 << 20)
    events = decoder.feed(f"retry: 1500\ndata: x\n\nretry: {field}\ndata: y\n\n".encode())
    assert [(e.data, e.retry) for e in events] == [("x", 1500), ("y", 1500)]  # the unreadable field ignored


def test_a_logprob_too_large_for_a_float_is_a_typed_error(server) -> None:
    huge = "1" + "0" * 400
    body = (
        '{"choices": [{"index": 0, "text": "ab", "logprobs": {"tokens": ["a", "b"], '
        f'"token_logprobs": [null, -{huge}], "text_offset": [0, 1]}}}}]}}'
    ).encode()
    server.script[:] = [Reply(200, body, headers={"Content-Type": "application/json"})]
    m = OnlineChatModule(base_url=server.base_url, model="m", api_key="sk-test", retry=RetryPolicy(max_retries=0))
    with pytest.raises(APIResponseValidationError, match=r"token_logprobs\[1\]: expected a finite number"):
        m.score([("a", "b")])
    m.close()
