"""A timeout too long to set (``timeout=1e9``, ``float("inf")``, ``Timeout(total=math.inf)``: what a caller
writes meaning "no limit") was refused as "expected a positive number", which it is: the error named
neither what was wrong (the upper bound) nor the remedy (``Timeout(total=None)`` removes the deadline)."""

from __future__ import annotations

import math

import pytest

from modules import OnlineChatModule
from modules.errors import ModuleConfigError
from modules.online.config import Timeout

TOO_LONG = [1e7, 1e9, 1e300, math.inf]


@pytest.mark.parametrize("value", TOO_LONG, ids=[repr(v) for v in TOO_LONG])
def test_a_timeout_too_long_names_the_bound_and_the_way_to_no_deadline(value: float) -> None:
    with pytest.raises(ModuleConfigError) as info:
        OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m", timeout=value)
    message = str(info.value)
    assert "below 10000000" in message and "Timeout(total=None)" in message
    with pytest.raises(ModuleConfigError, match=r"Timeout\.total: .*below 10000000.*Timeout\(total=None\)"):
        Timeout(total=value)


@pytest.mark.parametrize("value", [0, -1, math.nan, "5", True], ids=["0", "-1", "nan", "str", "True"])
def test_a_timeout_that_is_no_duration_names_what_is_expected(value: object) -> None:
    with pytest.raises(ModuleConfigError, match="expected a number of seconds above 0") as info:
        OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m", timeout=value)  # type: ignore[arg-type]
    assert "Timeout(total=None)" not in str(info.value)  # not "too long": no remedy about deadlines


def test_a_long_timeout_below_the_bound_and_no_deadline_are_accepted() -> None:
    m = OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m", timeout=Timeout(read=86400, total=None))
    assert m.timeout.total is None and m.with_options(timeout=9_999_999).timeout.read == 9_999_999
