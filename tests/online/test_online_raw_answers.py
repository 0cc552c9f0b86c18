"""Threat: a server (or anything listening on the port) answers arbitrary bytes.

Property: whatever bytes come back -- a mangled status line, odd headers, chunk sizes, a
compressed body that is not, a stream that is not -- the call ends in an answer or a
typed ``ModuleError``, plain or streamed.
"""

from __future__ import annotations

import gzip

import pytest
from fault_server import FaultServer, Raw
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules import OnlineChatModule
from modules.errors import ModuleError
from modules.online.config import Timeout
from modules.online.retry import RetryPolicy

KEY = "sk-test-0123456789abcdef"

STATUS = st.sampled_from([b"HTTP/1.1 200 OK", b"HTTP/1.1 500 X", b"HTTP/1.1 429 X", b"HTTP/1.0 200", b"HTTP/1.1 204"])
HEADER = st.sampled_from(
    [
        b"Content-Type: application/json",
        b"Content-Type: text/event-stream",
        b"Transfer-Encoding: chunked",
        b"Content-Encoding: gzip",
        b"Content-Encoding: deflate",
        b"Content-Length: 5",
        b"Content-Length: -1",
        b"Content-Length: 99999999999999999999",
        b"Retry-After: 0.01",
        b"x-should-retry: true",
        b"Connection: close",
    ]
)
BODY = st.sampled_from(
    [
        b"",
        b'{"choices": [{"message": {"content": "ok"}}]}',
        b"data: {}\n\n",
        b'data: {"choices": [{"delta": {"content": "a"}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n',
        b"5\r\nhello\r\n0\r\n\r\n",
        b"zz\r\nhello\r\n",
        gzip.compress(b'{"choices": [{"message": {"content": "ok"}}]}'),
        b"\xff\xfe\x00garbage",
    ]
)


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    status=STATUS,
    headers=st.lists(st.one_of(HEADER, st.binary(max_size=20)), max_size=5),
    body=st.one_of(BODY, st.binary(max_size=60)),
    stream=st.booleans(),
)
def test_any_bytes_in_answer_end_in_an_answer_or_a_module_error(server, status, headers, body, stream):
    server.script[:] = [Raw(b"\r\n".join([status, *headers]) + b"\r\n\r\n" + body)] * 3
    m = OnlineChatModule(
        base_url=server.base_url,
        model="m",
        api_key=KEY,
        timeout=Timeout(connect=1, read=0.5, total=2),
        retry=RetryPolicy(sleep=lambda seconds: None),  # retries happen, their waits are skipped
    )
    with m:
        try:
            if stream:
                text = "".join(m.stream("hi"))
            else:
                answer = m("hi")
                text = answer if isinstance(answer, str) else str(answer["content"])
        except ModuleError:
            return
    assert isinstance(text, str)
