"""Threat: a body of about 60 bytes holds the server's event loop for days (regular-expression backtracking).

The nesting check that runs before a body is parsed (and on every tool call's ``arguments``
string) removed JSON strings with a pattern that nested a quantifier inside another: on a string
left open it took exponential time, 3 s for 26 bytes, doubling every byte, on the event loop, so
no other client was answered. Each input here took the old pattern past any test's patience (the
thread never came back); the check is now linear, and the body is a 400 at once.

The waits below are hang detectors (a minute for work of milliseconds), not timings.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.server.json_body import nesting

ROOT = Path(__file__).resolve().parents[2]

OPEN_STRINGS = {
    "open string of plain bytes": b'{"model": "m", "messages": "' + b"x" * 40,
    "open string of escapes": b'["' + b'\\"' * 200_000,
    "open string after an escaped backslash": b'["\\\\' + b"a" * 100_000,
    "quotes each opening a string": b"[" + b'"a' * 200_000,
    "a lone backslash at the end": b'["' + b"x" * 50 + b"\\",
    "open string in arguments": b'{"a": "' + b"x" * 60,
}


def finishes(work: Any, *args: Any) -> list[Any]:
    """*work(*args)*'s result (or exception) in a list, or an empty list when it has not come back in 60 s."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(work(*args))
        except Exception as exc:  # noqa: BLE001 - the outcome is the result
            out.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    return out


CHECK = """
import sys
from modules.server.json_body import JSONProblem, nesting, strict_loads
body = sys.stdin.buffer.read()
nesting(body)
try:
    strict_loads(body)
except JSONProblem:
    print("400")
"""


@pytest.mark.parametrize("body", list(OPEN_STRINGS.values()), ids=list(OPEN_STRINGS))
def test_the_nesting_check_comes_back_on_an_open_string(body: bytes) -> None:
    # in a process of its own: a regular expression holds the GIL, so a thread of this one could not be waited out
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHECK], input=body, capture_output=True, timeout=60, cwd=ROOT, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the nesting check did not come back in 60 s")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout.decode().strip() == "400"


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


JSON_TEXT = st.text(alphabet=st.sampled_from('ab"\\[]{}\n\u00e9\U0001f600'), max_size=12)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | JSON_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(JSON_TEXT, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_the_nesting_of_valid_json_is_its_depth_whatever_its_strings_hold(value: Any) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
        assert nesting(text) == depth(value)
        assert nesting(text.encode("utf-8")) == depth(value)


def test_the_server_answers_a_short_open_string_with_a_400_and_keeps_serving(served_module: Any) -> None:  # noqa: F811
    url = served_module.url
    with httpx.Client(timeout=60) as http:
        raw = OPEN_STRINGS["open string of plain bytes"]
        answer = finishes(
            lambda: http.post(url + "/chat/completions", content=raw, headers={"content-type": "application/json"})
        )
        assert answer and not isinstance(answer[0], Exception), "the server did not answer"
        assert answer[0].status_code == 400
        assert answer[0].json()["error"]["message"].startswith("invalid JSON body")
        call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": "' + "x" * 60}}
        body = {
            "model": "tiny",
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            ],
        }
        answer = finishes(lambda: http.post(url + "/chat/completions", json=body))
        assert answer and not isinstance(answer[0], Exception), "the server did not answer"
        assert answer[0].status_code == 400
        assert http.get(url.removesuffix("/v1") + "/health").status_code == 200
