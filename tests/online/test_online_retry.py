"""The retry policy, rule by rule: which failures are retried, how often, and how long the module waits.

Waits are checked through an injected clock and sleep (never wall time);
attempts are counted by the real server on 127.0.0.1.
"""

from __future__ import annotations

import email.utils
import re
import socket

import pytest
from fault_server import Drop, FakeClock, FaultServer, Hang, Reply, Stream, completion, error_body, sse_events

from modules import OnlineChatModule
from modules.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    StreamInterruptedError,
    UnprocessableEntityError,
)
from modules.online.module import Timeout
from modules.online.retry import RetryPolicy, parse_retry_after

KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def server():
    """A fresh fault-injecting server."""
    with FaultServer() as srv:
        yield srv


@pytest.fixture
def clock():
    """A fake clock whose sleep records waits instead of waiting."""
    return FakeClock()


def make(server, clock, *, random=lambda: 0.0, wall=lambda: 1_700_000_000.0, **kw) -> OnlineChatModule:
    policy = RetryPolicy(sleep=clock.sleep, clock=clock.clock, random=random, wall_clock=wall)
    return OnlineChatModule(base_url=server.base_url, model="m", api_key=KEY, retry=policy, **kw)


# -- what is retried: (status, headers) -> attempts, error ------------------------------------

RULES = [
    # status, headers, attempts (max_retries=2), error raised
    (400, {}, 1, BadRequestError),
    (401, {}, 1, AuthenticationError),
    (403, {}, 1, PermissionDeniedError),
    (404, {}, 1, NotFoundError),
    (408, {}, 3, APIStatusError),
    (409, {}, 3, ConflictError),
    (422, {}, 1, UnprocessableEntityError),
    (429, {}, 3, RateLimitError),
    (500, {}, 3, InternalServerError),
    (502, {}, 3, InternalServerError),
    (503, {}, 3, InternalServerError),
    (504, {}, 3, InternalServerError),
    (400, {"x-should-retry": "true"}, 3, BadRequestError),
    (503, {"x-should-retry": "false"}, 1, InternalServerError),
    (429, {"X-Should-Retry": "False"}, 1, RateLimitError),
]


@pytest.mark.parametrize(
    ("status", "headers", "attempts", "error"),
    RULES,
    ids=[f"{s}-{'-'.join(f'{k}={v}' for k, v in h.items()) or 'plain'}" for s, h, _, _ in RULES],
)
def test_which_statuses_are_retried(server, clock, status, headers, attempts, error):
    server.script += [Reply(status, error_body(f"status {status}"), {**headers, "x-request-id": "req_1"})] * 3
    with pytest.raises(error) as info:
        make(server, clock)("hi")
    assert type(info.value) is error
    assert info.value.status_code == status
    assert info.value.request_id == "req_1"
    assert server.attempts == attempts
    assert clock.sleeps == [0.5, 1.0][: attempts - 1]


@pytest.mark.parametrize("status", [408, 409, 429, 500, 503])
def test_a_retried_status_then_success_returns_the_answer(server, clock, status):
    server.script += [Reply(status, error_body("busy")), Reply(body=completion("fine"))]
    assert make(server, clock)("hi") == "fine"
    assert server.attempts == 2
    assert clock.sleeps == [0.5]


def test_max_retries_zero_means_one_attempt(server, clock):
    server.script += [Reply(500)] * 3
    with pytest.raises(InternalServerError):
        make(server, clock, max_retries=0)("hi")
    assert (server.attempts, clock.sleeps) == (1, [])


def test_max_retries_counts_retries_after_the_first_attempt(server, clock):
    server.script += [Reply(503)] * 10
    with pytest.raises(InternalServerError):
        make(server, clock, max_retries=5)("hi")
    assert server.attempts == 6


# -- how long it waits ---------------------------------------------------------------------


def test_backoff_doubles_from_half_a_second_and_caps_at_eight(server, clock):
    server.script += [Reply(500)] * 8
    with pytest.raises(InternalServerError):
        make(server, clock, max_retries=7)("hi")
    assert clock.sleeps == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_jitter_shortens_each_wait_by_up_to_a_quarter(server, clock):
    server.script += [Reply(500)] * 3
    with pytest.raises(InternalServerError):
        make(server, clock, random=lambda: 0.4)("hi")
    assert clock.sleeps == pytest.approx([0.5 * 0.9, 1.0 * 0.9])


def test_jitter_bounds_with_the_real_random_source():
    policy = RetryPolicy()
    waits = [policy.delay(retry) for retry in range(6) for _ in range(200)]
    for retry in range(6):
        base = min(0.5 * 2**retry, 8.0)
        chunk = waits[retry * 200 : (retry + 1) * 200]
        assert all(0.75 * base <= w <= base for w in chunk)
        assert len(set(chunk)) > 100  # actually random


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param({"Retry-After": "3"}, [3.0, 3.0], id="seconds"),
        pytest.param({"Retry-After": "1.5"}, [1.5, 1.5], id="fractional-seconds"),
        pytest.param({"retry-after-ms": "250"}, [0.25, 0.25], id="milliseconds"),
        pytest.param({"retry-after-ms": "250", "Retry-After": "9"}, [0.25, 0.25], id="ms-wins"),
        pytest.param({"Retry-After": email.utils.formatdate(1_700_000_007, usegmt=True)}, [7.0, 7.0], id="http-date"),
        pytest.param({"Retry-After": "60"}, [60.0, 60.0], id="at-the-cap"),
        pytest.param({"Retry-After": "61"}, [0.5, 1.0], id="over-the-cap-falls-back-to-backoff"),
        pytest.param({"Retry-After": "0"}, [0.5, 1.0], id="zero-falls-back"),
        pytest.param({"Retry-After": "-3"}, [0.5, 1.0], id="negative-falls-back"),
        pytest.param({"Retry-After": "soon"}, [0.5, 1.0], id="garbage-falls-back"),
        pytest.param({"Retry-After": email.utils.formatdate(1_699_999_000, usegmt=True)}, [0.5, 1.0], id="past-date"),
    ],
)
def test_retry_after_is_honoured_up_to_a_cap(server, clock, headers, expected):
    server.script += [Reply(429, error_body("slow down"), headers)] * 3
    with pytest.raises(RateLimitError):
        make(server, clock)("hi")
    assert clock.sleeps == pytest.approx(expected)


def test_parse_retry_after_reads_headers_case_insensitively():
    assert parse_retry_after({"RETRY-AFTER": "2"}) == 2.0
    assert parse_retry_after({}) is None


# -- connection failures -------------------------------------------------------------------------


def test_dropped_connections_are_retried(server, clock):
    server.script += [Drop(), Drop(), Reply(body=completion("third time"))]
    assert make(server, clock)("hi") == "third time"
    assert (server.attempts, clock.sleeps) == (3, [0.5, 1.0])


def test_dropped_connections_give_a_connection_error_after_the_retries(server, clock):
    server.script += [Drop()] * 3
    with pytest.raises(APIConnectionError) as info:
        make(server, clock)("hi")
    assert not isinstance(info.value, APITimeoutError)
    assert server.attempts == 3


def test_connection_refused_is_retried(clock):
    with socket.socket() as s:  # a port that was free a moment ago and has no listener now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    policy = RetryPolicy(sleep=clock.sleep, clock=clock.clock, random=lambda: 0.0)
    m = OnlineChatModule(base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key=KEY, retry=policy)
    with pytest.raises(APIConnectionError, match="Connection error"):
        m("hi")
    assert clock.sleeps == [0.5, 1.0]  # three attempts


def test_a_read_timeout_is_retried_then_raised_as_a_timeout(server, clock):
    server.script += [Hang(1.0)] * 3
    with pytest.raises(APITimeoutError) as info:
        make(server, clock, timeout=Timeout(connect=1.0, read=0.05, total=None))("hi")
    assert isinstance(info.value, TimeoutError)  # also a builtin TimeoutError
    assert server.attempts == 3


def test_a_hung_attempt_is_retried_and_the_next_answer_wins(server, clock):
    server.script += [Hang(1.0), Reply(body=completion("late"), delay=0.01)]
    assert make(server, clock, timeout=Timeout(connect=1.0, read=0.2, total=None))("hi") == "late"
    assert server.attempts == 2


def test_no_retry_that_would_pass_the_total_deadline(server, clock):
    server.script += [Reply(429, headers={"Retry-After": "6"})] * 3
    with pytest.raises(RateLimitError):
        make(server, clock, timeout=Timeout(connect=1, read=5, total=10))("hi")
    assert server.attempts == 2  # 1000 -> wait 6 -> 1006; another 6 would pass 1010
    assert clock.sleeps == [6.0]


def test_the_total_deadline_bounds_the_read_timeout(server, clock):
    """After waits consumed most of the deadline, the next attempt gets only what is left."""
    server.script += [Reply(500), Hang(1.0)]
    clock_sleep = clock.sleep

    def sleep_most(seconds: float) -> None:  # the wait uses up all but 0.05 s of the deadline
        clock_sleep(seconds)
        clock.now = 1000.0 + 10 - 0.05

    policy = RetryPolicy(sleep=sleep_most, clock=clock.clock, random=lambda: 0.0)
    m = OnlineChatModule(base_url=server.base_url, model="m", api_key=KEY, retry=policy,
                         timeout=Timeout(connect=1, read=30, total=10))  # fmt: skip
    with pytest.raises(APITimeoutError):
        m("hi")
    assert server.attempts == 2


# -- streams -------------------------------------------------------------------------------------


def test_a_stream_is_retried_before_it_starts(server, clock):
    server.script += [Reply(503), Drop(), Stream(sse_events("ok then"))]
    assert "".join(make(server, clock).stream("hi")) == "ok then"
    assert server.attempts == 3


def test_a_stream_is_never_retried_once_bytes_reached_the_caller(server, clock):
    events = sse_events("one two three four")
    server.script += [Stream(events[:3], cut=True), Stream(events)]
    s = make(server, clock).stream("hi")
    got = []
    with pytest.raises(StreamInterruptedError) as info:
        for piece in s:
            got.append(piece)
    assert got == ["one ", "two "]
    assert info.value.partial_text == "one two "
    assert (server.attempts, clock.sleeps) == (1, [])


def test_a_stream_that_goes_silent_times_out_with_its_partial_text(server, clock):
    server.script.append(Stream(sse_events("one two three")[:2], hang_after=0.5))
    s = make(server, clock, timeout=Timeout(connect=1, read=0.1, total=None)).stream("hi")
    with pytest.raises(StreamInterruptedError, match="cut short") as info:
        list(s)
    assert info.value.partial_text == "one "


def test_a_negative_retry_count_is_a_configuration_error() -> None:
    from modules import ModuleConfigError, OnlineChatModule

    with pytest.raises(ModuleConfigError, match="max_retries"):
        OnlineChatModule(
            source="openai-compatible", base_url="http://127.0.0.1:9/v1", model="m", api_key="k", max_retries=-1
        )


def test_bad_call_time_tools_are_a_tools_error_before_any_request() -> None:
    from modules import OnlineChatModule
    from prompter.errors import ToolsError

    module = OnlineChatModule(source="openai-compatible", base_url="http://127.0.0.1:9/v1", model="m", api_key="k")
    for tools in ("x", [1]):
        with pytest.raises(ToolsError, match="tools"):
            module("hi", tools=tools)  # type: ignore[arg-type]


BAD_CONFIG = [
    pytest.param({"source": 123}, "source: expected", id="source-not-a-str"),
    pytest.param({"base_url": "http://127.0.0.1:9/v1?key=sk-secret-in-query"}, "query string", id="query-in-base-url"),
    pytest.param({"timeout": float("inf")}, "timeout", id="infinite-timeout"),
    pytest.param({"generation": {"max_tokens": -5}}, "max_tokens=-5", id="negative-max-tokens"),
    pytest.param({"generation": {"temperature": "hot"}}, "temperature='hot'", id="temperature-not-a-number"),
    pytest.param({"generation": {"stop": ""}}, "stop=''", id="empty-stop"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD_CONFIG)
def test_bad_configuration_is_refused_at_construction(kwargs: dict[str, object], message: str) -> None:
    from modules import ModuleConfigError, OnlineChatModule

    options = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "k", **kwargs}
    with pytest.raises(ModuleConfigError, match=re.escape(message)) as err:
        OnlineChatModule(**options)  # type: ignore[arg-type]
    assert "sk-secret-in-query" not in str(err.value)


@pytest.mark.parametrize(
    ("field", "value"), [("connect", "5"), ("read", -1), ("total", -1), ("read", True)], ids=lambda v: repr(v)
)
def test_timeout_fields_are_checked_when_made(field: str, value: object) -> None:
    from modules import ModuleConfigError
    from modules.online.module import Timeout

    with pytest.raises(ModuleConfigError, match=f"Timeout.{field}"):
        Timeout(**{field: value})  # type: ignore[arg-type]


def test_bad_per_call_options_are_refused_before_sending() -> None:
    from modules import ModuleConfigError, OnlineChatModule

    module = OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m", api_key="k")
    with pytest.raises(ModuleConfigError, match="top_p=3"):
        module("hi", top_p=3)


def test_scripted_tool_calls_get_distinct_ids() -> None:
    from modules.testing import tool_call

    assert tool_call("f", {})["id"] != tool_call("f", {})["id"]
