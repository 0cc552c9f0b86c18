"""Threat: a server sends one enormous line (or a stream far larger than any answer).

The decoder must stay linear in the input: an unfinished line is joined once, when it ends,
not re-copied for every chunk (which made a 64 MB line take 22 s); and a line or stream over
the documented cap (``max_response_bytes``, default 32 MiB) is a typed error, raised before
the whole of it is buffered.
"""

from __future__ import annotations

import json

import pytest
from fault_server import FaultServer, Reply, Stream, sse_events

import modules.online.sse as sse
from modules import OnlineChatModule
from modules.errors import APIResponseValidationError, ModuleConfigError
from modules.online.module import MAX_RESPONSE_BYTES
from modules.online.sse import ServerSentEvent, SSEDecoder

KEY = "sk-test-0123456789abcdef"


class CountingJoin:
    """Stands in for the decoder's ``_join``: counts calls and the characters they copy."""

    def __init__(self) -> None:
        self.calls = 0
        self.chars = 0

    def __call__(self, pieces: list[str]) -> str:
        self.calls += 1
        out = "".join(pieces)
        self.chars += len(out)
        return out


@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_a_long_line_in_many_chunks_is_joined_once_and_each_character_copied_once(monkeypatch, chunk):
    join = CountingJoin()
    monkeypatch.setattr(sse, "_join", join)
    line = b"data: " + b"x" * 20_000 + b"\n\n"
    decoder = SSEDecoder()
    events = []
    for start in range(0, len(line), chunk):
        events += decoder.feed(line[start : start + chunk])
    assert events == [ServerSentEvent("x" * 20_000)]
    assert join.calls <= 1  # once, when the terminator arrived (none when it came in one chunk)
    assert join.chars <= len(line)  # linear: the old decoder copied the buffer again for every chunk


def test_many_short_lines_in_one_chunk_scan_each_terminator_once(monkeypatch):
    """10,000 LF-terminated lines and no CR: the CR search must not rescan the rest of the chunk per line."""
    calls: list[int] = []

    class Text(str):
        def find(self, sub, start=0, *rest):  # type: ignore[override]
            calls.append(1)
            return str.find(self, sub, start, *rest)

    decoder = SSEDecoder()
    monkeypatch.setattr(decoder._utf8, "decode", lambda data, final=False: Text(data.decode()))
    blob = b"".join(b"data: %d\n\n" % i for i in range(5_000))
    assert len(decoder.feed(blob)) == 5_000
    assert calls, "the searches were observed"
    assert len(calls) <= 10_000 + 2  # one LF search per line, one CR search in all (main: two per line)


def test_an_over_long_line_is_refused_before_it_is_buffered():
    decoder = SSEDecoder(max_line=1000)
    decoder.feed(b"data: " + b"y" * 900)
    with pytest.raises(APIResponseValidationError, match="longer than 1000"):
        decoder.feed(b"y" * 200)


@pytest.fixture
def server():
    with FaultServer() as srv:
        yield srv


def make(server, **kw) -> OnlineChatModule:
    return OnlineChatModule(base_url=server.base_url, model="m", api_key=KEY, max_retries=0, **kw)


def test_the_default_cap_is_documented_and_32_mib():
    assert MAX_RESPONSE_BYTES == 32 * 1024 * 1024
    assert "max_response_bytes" in (OnlineChatModule.__doc__ or "")
    assert "32 MiB" in (OnlineChatModule.__doc__ or "")


def test_a_plain_answer_over_the_cap_is_a_typed_error(server):
    body = json.dumps({"choices": [{"message": {"content": "z" * 5000}, "finish_reason": "stop"}]})
    server.script += [Reply(body=body, headers={"Content-Type": "application/json"})] * 2
    with pytest.raises(APIResponseValidationError, match="max_response_bytes=4096"):
        make(server, max_response_bytes=4096)("hi")
    assert make(server, max_response_bytes=8192)("hi") == "z" * 5000


def test_an_answer_over_the_cap_is_not_asked_for_again(server):
    body = json.dumps({"choices": [{"message": {"content": "z" * 5000}, "finish_reason": "stop"}]})
    server.script += [Reply(body=body, headers={"Content-Type": "application/json"})] * 3
    m = OnlineChatModule(base_url=server.base_url, model="m", api_key=KEY, max_response_bytes=4096)
    with pytest.raises(APIResponseValidationError):
        m("hi")
    assert server.attempts == 1


def test_a_stream_over_the_cap_is_a_typed_error(server):
    server.script.append(Stream(sse_events(" ".join(["word"] * 2000))))
    with pytest.raises(APIResponseValidationError, match="max_response_bytes"):
        list(make(server, max_response_bytes=4096).stream("hi"))


def test_a_single_over_long_stream_line_is_a_typed_error(server):
    server.script.append(Stream([b"data: " + b"q" * 10_000 + b"\n\n"], chunked=True))
    with pytest.raises(APIResponseValidationError):
        list(make(server, max_response_bytes=4096).stream("hi"))


def test_a_json_answer_to_a_stream_request_over_the_cap_is_a_typed_error(server):
    body = json.dumps({"choices": [{"message": {"content": "z" * 5000}, "finish_reason": "stop"}]})
    server.script.append(Reply(body=body, headers={"Content-Type": "application/json"}))
    with pytest.raises(APIResponseValidationError, match="max_response_bytes"):
        list(make(server, max_response_bytes=4096).stream("hi"))


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "big"])
def test_a_bad_cap_is_a_configuration_error(value):
    with pytest.raises(ModuleConfigError, match="max_response_bytes"):
        OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m", api_key=KEY, max_response_bytes=value)
