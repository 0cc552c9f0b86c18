"""Constructor and ``with_options`` settings of the wrong kind are a ``ModuleConfigError`` naming the
setting, raised at once: they were a bare ``ValueError``/``AttributeError``, and a wrong ``retry=`` or
``session=`` only surfaced at the first call."""

from __future__ import annotations

import math
from typing import Any

import pytest

from modules import ModuleConfigError, OnlineChatModule
from modules.online.retry import RetryPolicy

BASE = "http://127.0.0.1:9/v1"  # never contacted: every case fails before a request

WRONG = [
    ({"retry": "fast"}, "retry: expected a modules.online.retry.RetryPolicy, got str"),
    ({"retry": {"max_retries": 1}}, "retry: expected a modules.online.retry.RetryPolicy, got dict"),
    ({"session": "session"}, "session: expected a requests.Session, got str"),
    ({"headers": "X-Trace: 1"}, "headers: expected a dict, got str"),
    ({"headers": [("X-Trace", "1")]}, "headers: expected a dict, got list"),
    ({"generation": ["temperature", 0.2]}, "generation: expected a dict, got list"),
]


@pytest.mark.parametrize(("settings", "message"), WRONG, ids=[message.split(":")[0] + repr(s) for s, message in WRONG])
def test_a_constructor_setting_of_the_wrong_kind_is_named_at_once(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ModuleConfigError, match=f"^{message}"):
        OnlineChatModule(base_url=BASE, model="m", **settings)


def test_with_options_headers_that_are_not_a_dict_are_named() -> None:
    m = OnlineChatModule(base_url=BASE, model="m")
    with pytest.raises(ModuleConfigError, match="^headers: expected a dict, got str"):
        m.with_options(headers="X-Trace: 1")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("initial_delay", math.nan),
        ("initial_delay", -0.5),
        ("initial_delay", True),
        ("max_delay", "8"),
        ("max_delay", math.inf),
        ("max_retry_after", math.nan),
        ("max_retry_after", -1),
    ],
    ids=repr,
)
def test_a_retry_delay_that_is_no_usable_number_of_seconds_is_named(field: str, value: object) -> None:
    with pytest.raises(ModuleConfigError, match=f"^RetryPolicy.{field}: expected a"):
        RetryPolicy(**{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["sleep", "clock", "wall_clock", "random"])
def test_a_retry_hook_that_is_not_callable_is_named(field: str) -> None:
    with pytest.raises(ModuleConfigError, match=f"^RetryPolicy.{field}: expected a function, got float"):
        RetryPolicy(**{field: 0.5})  # type: ignore[arg-type]


def test_retry_after_may_be_honoured_whatever_its_length() -> None:
    policy = RetryPolicy(max_retry_after=math.inf, random=lambda: 0.0)
    assert policy.delay(0, {"Retry-After": "3600"}) == 3600.0
