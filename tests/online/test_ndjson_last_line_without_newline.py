"""Ollama's NDJSON stream: a last line that ends the answer without its newline is not a cut.

JSON Lines lets the last line go without its line break. A stream whose final
``{"done": true}`` object came whole but unterminated raised
``StreamInterruptedError`` and lost a complete answer. A last line that is cut short
(not whole JSON) still raises, and a first line led by a byte order mark is read.
"""

from __future__ import annotations

import json
import socket

import pytest

from modules import OnlineChatModule
from modules.errors import StreamInterruptedError
from modules.testing import LoopbackServer, RecordedRequest

FORMATS = [None, "ollama_generate"]


def _lines(path: str) -> list[bytes]:
    if path.endswith("/api/generate"):
        objects = [{"model": "m", "response": "hel", "done": False},
                   {"model": "m", "response": "lo", "done": True, "done_reason": "stop"}]  # fmt: skip
    else:
        objects = [{"model": "m", "message": {"role": "assistant", "content": "hel"}, "done": False},
                   {"model": "m", "message": {"role": "assistant", "content": "lo"}, "done": True,
                    "done_reason": "stop"}]  # fmt: skip
    return [json.dumps(o).encode() for o in objects]


def _serve(make_body):  # type: ignore[no-untyped-def]
    def handler(request: RecordedRequest, sock: socket.socket) -> bool:
        body = make_body(_lines(request.path))
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nContent-Length: {len(body)}\r\n\r\n"
        sock.sendall(head.encode() + body)
        return True

    return LoopbackServer(handler)


def _module(server: LoopbackServer, fmt: str | None) -> OnlineChatModule:
    return OnlineChatModule(source="ollama", base_url=f"http://127.0.0.1:{server.port}", model="m", format=fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("ending", [b"", b"\r", b"  "])
def test_a_whole_last_line_without_its_newline_ends_the_answer(fmt, ending):
    with _serve(lambda lines: lines[0] + b"\n" + lines[1] + ending) as server, _module(server, fmt) as m:
        stream = m.stream("hi")
        assert "".join(stream) == "hello"
        assert stream.finish_reason == "stop" and stream.response is not None


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_last_line_cut_short_still_raises(fmt):
    with _serve(lambda lines: lines[0] + b"\n" + lines[1][:-3]) as server, _module(server, fmt) as m:
        with pytest.raises(StreamInterruptedError) as info:
            "".join(m.stream("hi"))
    assert info.value.partial_text == "hel"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_byte_order_mark_before_the_first_line_is_skipped(fmt):
    with _serve(lambda lines: b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n") as server, _module(server, fmt) as m:
        assert "".join(m.stream("hi")) == "hello"
