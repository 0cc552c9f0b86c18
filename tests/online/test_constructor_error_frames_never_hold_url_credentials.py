"""Threat: a traceback that shows each frame's locals gives away a constructor's credentials.

``OnlineChatModule(base_url="http://user:password@host/v1")`` is refused without
echoing the URL, but the error passed through ``__init__``, whose locals held the
URL (and the key, the headers): an error tracker or
``TracebackException(capture_locals=True)`` printed them. Worse, formatting those
locals failed outright with AttributeError, since the half-built module's repr read
attributes ``__init__`` had not set yet. Property: for every way the constructor
refuses its arguments, the traceback with locals formats, and no local of any frame
(the chained errors' included) holds the password, the key or a credential header.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from typing import Any

import pytest

from modules import OnlineChatModule
from modules.errors import ModuleConfigError

SECRET = "pw-canary-7c41e9d2b8"
KEY = "sk-canary-ctor-5a0f3e9c1d"
ROOT = "http://127.0.0.1:1/v1"

CASES: dict[str, dict[str, Any]] = {
    "password-in-url": {"base_url": f"http://user:{SECRET}@127.0.0.1:1/v1"},
    "password-in-url-with-key": {"base_url": f"http://u:{SECRET}@127.0.0.1:1/v1", "model": "m", "api_key": KEY},
    "password-in-url-bad-source": {"source": "bogus", "base_url": f"http://u:{SECRET}@127.0.0.1:1/v1"},
    "key-in-query": {"base_url": f"{ROOT}?key={SECRET}"},
    "unreadable-port": {"base_url": f"http://127.0.0.1:x{SECRET}/v1"},
    "key-then-bad-timeout": {"base_url": ROOT, "model": "m", "api_key": KEY, "timeout": "soon"},
    "key-then-bad-retries": {"base_url": ROOT, "model": "m", "api_key": KEY, "max_retries": -1},
    "secret-header-then-bad-header": {"base_url": ROOT, "model": "m", "headers": {"X-Api-Key": SECRET, "X": 1}},
}


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


@pytest.mark.parametrize("case", sorted(CASES), ids=sorted(CASES))
def test_no_frame_of_a_constructor_error_holds_a_credential(case: str) -> None:
    with pytest.raises(ModuleConfigError) as info:
        OnlineChatModule(**CASES[case])
    error = info.value
    frames = [
        frame
        for exc in _chain(error)
        for frame, _ in list(traceback.walk_tb(exc.__traceback__))[1 if exc is error else 0 :]  # not this test's
    ]
    held = [
        (frame.f_code.co_name, name)
        for frame in frames
        for name, value in frame.f_locals.items()
        if SECRET in repr(value) or KEY in repr(value)
    ]
    assert held == []
    shown = "".join(traceback.TracebackException.from_exception(error, capture_locals=True).format())
    assert SECRET not in shown and KEY not in shown


def test_a_half_built_module_has_a_repr() -> None:
    half = object.__new__(OnlineChatModule)
    assert repr(half) == "OnlineChatModule(<not built>)"
