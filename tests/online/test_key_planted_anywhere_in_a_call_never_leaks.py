"""Threat: a caller's own arguments carry the API key by mistake, and the module shows it back.

A key pasted into a call (as an option's value, an unknown keyword, a role, a part type, a tool, a
message) was echoed whole by the error that named the wrong argument (``generation option
temperature='sk-...'``, ``unknown call keyword 'sk-...'``, ``unknown role 'sk-...'``) and by
``repr`` of the built request. Property, over generated calls with the key planted in any string
value or dict key at any depth of any argument: the key (the module's ``api_key``, or a credential
header) is in no ``repr`` of the request, no error (``str``, ``repr``, attributes, the formatted
traceback), no log record at DEBUG and no answer; the request still sends the caller's values as
they are (only what is shown is masked). The same for the constructor: the key given as ``model``
(``OnlineChatModule("openai", "sk-...")``), ``source``, ``timeout``... was shown by the error and
by ``repr`` of the module.
"""

from __future__ import annotations

import json
import logging
import traceback
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules import OnlineChatModule
from modules.testing import FakeOpenAIServer

KEY = "sk-canary-0123456789abcdefXYZ"
planted = st.sampled_from([KEY, f"x {KEY} y", f"{KEY}\n", json.dumps({"k": KEY})])
leaf = st.one_of(planted, st.text(max_size=5), st.integers(-3, 3), st.booleans(), st.none(), st.floats(0, 2))
values = st.recursive(
    leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(planted | st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
OPTIONS = ["temperature", "max_tokens", "stop", "metadata", "user", "seed", "tool_choice", "response_format"]


@st.composite
def calls(draw: st.DrawFn) -> dict[str, Any]:
    where = draw(st.sampled_from(["input", "history", "role", "part", "tools", "option", "keyword", "strategy"]))
    value = draw(values)
    call: dict[str, Any] = {"input": "hi"}
    if where == "input":
        call["input"] = draw(planted)
    elif where == "history":
        call["history"] = [[draw(planted), draw(planted)]] if draw(st.booleans()) else [value]
    elif where == "role":
        call["history"] = [{"role": draw(planted), "content": "x"}]
    elif where == "part":
        call["history"] = [{"role": "user", "content": [{"type": draw(planted), "text": value}]}]
    elif where == "tools":
        function = {"name": draw(planted | st.just("f")), "description": value, "parameters": value}
        call["tools"] = [{"type": "function", "function": function}]
    elif where == "option":
        call[draw(st.sampled_from(OPTIONS))] = value
    elif where == "keyword":
        call[draw(planted)] = value
    else:
        call["as_agent"] = draw(planted)
    return call


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer() as srv:  # answers by echoing the last user message
        yield srv


@pytest.mark.parametrize("holder", ["api_key", "header"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=calls())
def test_a_key_planted_anywhere_in_a_call_is_never_shown_back(server, holder, call):
    given_call = json.dumps(call, sort_keys=True, default=repr)
    credentials: dict[str, Any] = (
        {"api_key": KEY} if holder == "api_key" else {"api_key": "sk-other", "headers": {"X-Auth-Token": KEY}}
    )
    records = _Records()
    root = logging.getLogger()
    root.addHandler(records)
    root.setLevel(logging.DEBUG)
    shown: list[str] = []
    try:
        m = OnlineChatModule(base_url=server.base_url, model="m", max_retries=0, **credentials)
        with m:
            try:
                request = m.build_request(**call)
                shown.append(repr(request))
                sent = json.dumps(request.body, ensure_ascii=False, default=repr)
                shown.append(repr(m.respond(**call)))
            except Exception as exc:  # noqa: BLE001 - every error is checked below
                shown += [str(exc), repr(exc), repr(vars(exc)), "".join(traceback.format_exception(exc))]
            else:
                assert KEY in sent or KEY not in given_call or "as_agent" in call  # sent as given
    finally:
        root.removeHandler(records)
        root.setLevel(logging.WARNING)
    shown += records.lines
    assert [text for text in shown if KEY in text] == []
    assert json.dumps(call, sort_keys=True, default=repr) == given_call  # the caller's arguments are untouched


ARGUMENTS = ["source", "model", "base_url", "timeout", "max_retries", "format", "generation", "strategy", "as_agent"]


@pytest.mark.parametrize("holder", ["api_key", "header"])
@pytest.mark.parametrize("argument", ARGUMENTS)
def test_a_key_given_to_the_constructor_in_the_wrong_place_is_never_shown_back(holder, argument):
    """``OnlineChatModule("openai", "sk-...")`` (the key as the model) and the like: the error naming the
    wrong argument, and ``repr`` of the module and of its requests, show ``***``."""
    value: Any = {"temperature": KEY} if argument == "generation" else KEY
    credentials: dict[str, Any] = (
        {"api_key": KEY} if holder == "api_key" else {"api_key": "sk-other", "headers": {"X-Auth-Token": KEY}}
    )
    shown: list[str] = []
    try:
        m = OnlineChatModule(**{"source": "openai", argument: value, **credentials})
    except Exception as exc:  # noqa: BLE001 - every error is checked below
        shown += [str(exc), repr(exc), repr(vars(exc)), "".join(traceback.format_exception(exc))]
    else:
        shown += [repr(m), repr(m.build_request("hi"))]
        m.close()
    assert shown and [text for text in shown if KEY in text] == []
