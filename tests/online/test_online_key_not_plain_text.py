"""Threat: an API key that is not plain header text leaks through the HTTP library's own error.

A key read from a file keeps its line break (``api_key=open("key.txt").read()``). Sent as it
was, requests refused the header with ``repr(key)`` in its message: the line break escaped, so
the scrubber, which masks the key as written, missed it, and the message went into the error and
into the log line of every retry. A key with a character outside Latin-1 escaped as a bare
``UnicodeEncodeError`` holding the key. Now such a key (given, or from the source's environment
variable, or as a credential header) is refused when the module is made: a typed error naming
what is wrong and where, never the key, and no request is sent.
"""

from __future__ import annotations

import logging
import traceback

import pytest
from fault_server import FaultServer, Reply

from modules import OnlineChatModule
from modules.errors import ModuleConfigError

KEY = "sk-canary-7f3a9c2e5b8d1f4a6c0e"
BAD = [
    (KEY + "\n", "a line break at its end"),
    (KEY + "\r\n", "a carriage return at position"),
    ("\t" + KEY, "a tab at its start"),
    (KEY[:8] + " " + KEY[8:], "a space at position 8"),
    (KEY + "\u2019", r"a character that is not ASCII \(U\+2019\) at its end"),
    (KEY[:5] + "\x00" + KEY[5:], r"a control character \(U\+0000\) at position 5"),
    (KEY + "\x7f", r"a control character \(U\+007F\) at its end"),
]


def _body() -> dict[str, object]:
    return {"choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}


def _everything(exc: BaseException, log: str) -> str:
    return "".join([str(exc), repr(exc), repr(exc.args), *traceback.format_exception(exc), log])


@pytest.mark.parametrize(("key", "named"), BAD)
def test_a_key_that_is_not_plain_text_is_refused_without_showing_it(
    key: str, named: str, caplog: pytest.LogCaptureFixture
) -> None:
    with FaultServer() as server, caplog.at_level(logging.DEBUG):
        server.script.append(Reply(200, _body()))
        with pytest.raises(ModuleConfigError, match=f"api_key: the key holds {named}") as info:
            OnlineChatModule(source="openai", model="m", base_url=server.base_url, api_key=key, max_retries=2)
        assert not server.requests  # refused before anything was sent
    seen = _everything(info.value, caplog.text)
    assert KEY not in seen and KEY[:12] not in seen and KEY[-12:] not in seen
    assert "strip" in str(info.value)  # the remedy


def test_a_key_from_the_environment_is_checked_and_named_by_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY + "\n")
    with pytest.raises(ModuleConfigError, match="DEEPSEEK_API_KEY: the key holds a line break at its end") as info:
        OnlineChatModule(source="deepseek")
    assert KEY not in _everything(info.value, "")


def test_a_credential_header_that_is_not_plain_text_is_refused() -> None:
    with pytest.raises(ModuleConfigError, match=r"headers\['Authorization'\]: the key holds a line break") as info:
        OnlineChatModule(
            source="openai", model="m", base_url="http://127.0.0.1:9", api_key="sk-other-0123456789",
            headers={"Authorization": f"Bearer {KEY}\n"},
        )
    assert KEY not in _everything(info.value, "")


def test_a_plain_key_and_a_bearer_header_still_work() -> None:
    with FaultServer() as server:
        server.script.extend([Reply(200, _body()), Reply(200, _body())])
        module = OnlineChatModule(source="openai", model="m", base_url=server.base_url, api_key=KEY)
        assert module("hi") == "ok"
        assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
        other = OnlineChatModule(
            source="openai", model="m", base_url=server.base_url, api_key="sk-other-0123456789",
            headers={"Authorization": f"Bearer {KEY}"},
        )
        assert other("hi") == "ok"


@pytest.mark.parametrize(
    ("headers", "named"),
    [
        ({"X-Title": "demo\r\nX-Injected: 1"}, r"headers\['X-Title'\]: the value holds U\+000D at position 4"),
        ({"X-Title": "\u65e5\u672c"}, r"headers\['X-Title'\]: the value holds U\+65E5 at position 0"),
        ({"X Title": "demo"}, "is not a header name"),
        ({"X-Count": 3}, r"headers\['X-Count'\]: expected a str value, got int"),
    ],
)
def test_header_injection_and_headers_http_cannot_carry_are_refused_when_the_module_is_made(
    headers: dict[str, object], named: str
) -> None:
    with pytest.raises(ModuleConfigError, match=named):
        OnlineChatModule(source="openai", model="m", base_url="http://127.0.0.1:9", api_key=KEY, headers=headers)


def test_an_ordinary_latin_1_header_is_sent() -> None:
    with FaultServer() as server:
        server.script.append(Reply(200, _body()))
        module = OnlineChatModule(
            source="openai", model="m", base_url=server.base_url, api_key=KEY, headers={"X-Title": "caf\u00e9\tbar"}
        )
        assert module("hi") == "ok"
        assert server.requests[0].headers["x-title"] in ("caf\u00e9\tbar", "caf\u00c3\u00a9\tbar")
