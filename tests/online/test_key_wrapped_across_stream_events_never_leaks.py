"""Threat: a server echoes the API key wrapped across lines *and* sends it in several stream events.

A key wrapped across lines (``"sk-ab\\n  cdef"``) was masked in whole texts, and a key split
across stream events was masked in the pieces, but not both at once: a piece that ended in a
line break inside the key was handed on, because a line break is no beginning of the key. The
key came out, in two pieces, to the caller and in ``stream.text``; only the error's
``partial_text`` (masked as one text) hid it. Property, over generated wraps (``\\n``, ``\\r\\n``,
``\\r`` with spaces and tabs around them), places and splits into events, for the OpenAI,
Anthropic, Gemini and Ollama streams over real HTTP on 127.0.0.1: what reaches the caller is the
answer with the key as ``***`` (every piece, ``stream.text``, the response, the error of a cut
stream, the log records at DEBUG), and no text but the key is lost.
"""

from __future__ import annotations

import json
import logging
import re
import traceback

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wire.anthropic import AnthropicServer
from wire.anthropic import sse as anthropic_event
from wire.common import Answer, WireServer
from wire.gemini import GeminiServer
from wire.ollama import MODEL as OLLAMA_MODEL
from wire.ollama import OllamaServer
from wire.openai import OpenAIServer

from modules import OnlineChatModule
from modules.errors import StreamInterruptedError

KEY = "sk-CANARY-0123456789ABCDEFGHIJ"
FILLER = "abcdefghijklmnopqrtuvwxyz .,!?\n"  # no character of the key but the line break and space


def openai_stream(pieces: list[str], end: bool) -> bytes:
    def chunk(text: str, finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
        return f"data: {json.dumps({'id': 'c', 'model': 'm', 'choices': [choice]})}\n\n".encode()

    return b"".join(chunk(p) for p in pieces) + (chunk("", "stop") + b"data: [DONE]\n\n" if end else b"")


def anthropic_stream(pieces: list[str], end: bool) -> bytes:
    events = [("message_start", {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {}}}),
              ("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "text", "text": ""}})]  # fmt: skip
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": p}}) for p in pieces]  # fmt: skip
    if end:
        events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
                   ("message_stop", {"type": "message_stop"})]  # fmt: skip
    return b"".join(anthropic_event(n, v) for n, v in events)


def gemini_stream(pieces: list[str], end: bool) -> bytes:
    chunks = [{"candidates": [{"content": {"role": "model", "parts": [{"text": p}]}}]} for p in pieces]
    if end:
        chunks.append({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}]})
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks)


def ollama_stream(pieces: list[str], end: bool) -> bytes:
    lines = [{"model": OLLAMA_MODEL, "message": {"role": "assistant", "content": p}, "done": False} for p in pieces]
    if end:
        lines.append({"model": OLLAMA_MODEL, "message": {"role": "assistant", "content": ""}, "done": True})
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


SOURCES = {
    "openai": (OpenAIServer, openai_stream, "text/event-stream", "gpt-test", "/v1"),
    "anthropic": (AnthropicServer, anthropic_stream, "text/event-stream", "claude-test", ""),
    "gemini": (GeminiServer, gemini_stream, "text/event-stream", "gemini-test", ""),
    "ollama": (OllamaServer, ollama_stream, "application/x-ndjson", OLLAMA_MODEL, ""),
}

gaps = st.builds(
    lambda before, brk, after: before + brk + after,
    st.text(" \t", max_size=3),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.text(" \t", max_size=3),
)


@st.composite
def wrapped_key(draw: st.DrawFn) -> str:
    """The key with a line break (and spaces around it) at one to three places inside it."""
    cuts = sorted(draw(st.sets(st.integers(1, len(KEY) - 1), min_size=1, max_size=3)))
    parts = [KEY[a:b] for a, b in zip([0, *cuts], [*cuts, len(KEY)])]
    return "".join(part + (draw(gaps) if i < len(parts) - 1 else "") for i, part in enumerate(parts))


@st.composite
def answers(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    """(the text sent, the text expected, the text split into the events' pieces)."""
    keys = draw(st.lists(wrapped_key(), min_size=1, max_size=2))
    fillers = draw(st.lists(st.text(FILLER, max_size=8), min_size=len(keys) + 1, max_size=len(keys) + 1))
    sent = fillers[0] + "".join(k + f for k, f in zip(keys, fillers[1:]))
    expected = fillers[0] + "".join("***" + f for f in fillers[1:])
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(sent) - 1)), max_size=8)))
    pieces = [sent[a:b] for a, b in zip([0, *cuts], [*cuts, len(sent)]) if sent[a:b]]
    return sent, expected, pieces


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def unwrapped(text: str) -> str:
    return re.sub(r"\s", "", text)


def assert_no_key(*texts: str) -> None:
    for text in texts:
        assert KEY not in unwrapped(text)  # whitespace taken out: the key, wrapped or not, is not there


@pytest.mark.parametrize("source", sorted(SOURCES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answer=answers(), cut=st.booleans())
def test_a_key_wrapped_across_lines_and_split_across_events_never_reaches_the_caller(source, answer, cut):
    sent, expected, pieces = answer
    server_class, stream_of, content_type, model, root = SOURCES[source]
    records = _Records()
    logging.getLogger().addHandler(records)
    logging.getLogger().setLevel(logging.DEBUG)
    server: WireServer
    try:
        with server_class() as server:
            server.script.append(Answer(200, {"Content-Type": content_type}, chunks=[stream_of(pieces, not cut)]))
            m = OnlineChatModule(source, model=model, api_key=KEY, base_url=server.base_url + root, max_retries=0)
            stream = m.stream("hi")
            got: list[str] = []
            error: StreamInterruptedError | None = None
            try:
                got.extend(stream)
            except StreamInterruptedError as exc:
                error = exc
            m.close()
    finally:
        logging.getLogger().removeHandler(records)
        logging.getLogger().setLevel(logging.WARNING)
    assert_no_key(*got, "".join(got), stream.text, *records.lines)
    if cut:
        assert error is not None
        assert error.partial_text == expected
        assert expected.startswith("".join(got))
        assert_no_key(str(error), repr(error), "".join(traceback.format_exception(error)))
    else:
        assert error is None
        assert "".join(got) == stream.text == expected
        assert stream.response is not None
        assert_no_key(repr(stream.response))
