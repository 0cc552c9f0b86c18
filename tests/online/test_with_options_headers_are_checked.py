"""``with_options(headers=...)`` checks its headers as the constructor does: a key never shows in the error.

The constructor refuses a header HTTP cannot carry (checked before anything is sent, a
credential's value named but never shown). ``with_options`` skipped that check and handed the
headers to the HTTP library at send time, so a credential header with a line break came back as a
*retried* ``APIConnectionError`` whose text held the key (the library's message quotes the value
escaped, which the masking could not recognise); a line break meant for header injection, a
non-str value or a name with a space became a connection error or went out as a malformed
header; a value outside Latin-1 raised a bare ``UnicodeEncodeError``. A constructor given a
non-str header name raised ``AttributeError``.
"""

from __future__ import annotations

from typing import Any

import pytest
from fault_server import FaultServer, Reply, completion

from modules import OnlineChatModule
from modules.errors import ModuleConfigError

CANARY = "sk-canary-0123456789abcdefXYZ"
BAD: list[tuple[str, dict[Any, Any]]] = [
    ("key-with-line-break", {"Authorization": f"Bearer {CANARY}\r\nX-Injected: 1"}),
    ("x-api-key-with-newline", {"x-api-key": CANARY + "\n"}),
    ("x-goog-api-key-with-tab", {"x-goog-api-key": CANARY + "\t"}),
    ("header-injection", {"X-Trace": "a\r\nX-Injected: 1"}),
    ("int-value", {"X-Num": 5}),
    ("space-in-name", {"bad name": "v"}),
    ("colon-in-name", {"X:Y": "v"}),
    ("not-latin-1", {"X-Name": "caf\u00e9\u4e2d"}),
    ("int-name", {5: "v"}),
]


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


@pytest.mark.parametrize("headers", [h for _, h in BAD], ids=[name for name, _ in BAD])
def test_a_header_http_cannot_carry_is_refused_by_with_options_before_sending(server, headers):
    m = OnlineChatModule(base_url=server.base_url, model="m", api_key="sk-test-0123456789abcdef")
    before = server.attempts
    with pytest.raises(ModuleConfigError) as caught:
        m.with_options(headers=headers)("hi")
    assert CANARY not in str(caught.value) and CANARY not in repr(caught.value.__context__)
    assert server.attempts == before


@pytest.mark.parametrize("headers", [h for _, h in BAD], ids=[name for name, _ in BAD])
def test_the_constructor_refuses_the_same_headers_with_a_module_error(headers):
    with pytest.raises(ModuleConfigError) as caught:
        OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m", headers=headers)
    assert CANARY not in str(caught.value)


def test_good_headers_from_with_options_are_sent(server):
    server.script.append(Reply(200, completion("ok")))
    m = OnlineChatModule(base_url=server.base_url, model="m", api_key="sk-test-0123456789abcdef")
    assert m.with_options(headers={"X-Trace": "caf\u00e9\tv1"})("hi") == "ok"
    assert server.requests[-1].headers["x-trace"] == "caf\u00e9\tv1"
