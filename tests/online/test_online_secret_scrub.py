"""Threat: a server echoes the caller's credentials back, anywhere, so they reach logs and error reports.

A key (the API key, or an ``x-api-key`` value given in ``headers=``) may come back in a
header (``x-request-id``), an error body (any field, any key, JSON-escaped so that the raw
text does not contain it), a success body (the text, tool calls), a body of the wrong
shape, or a stream -- split across any number of events. Property: for random keys and
random placements, the key never appears in ``str``/``repr``/args/attributes of the
exception, in its formatted traceback (with chained causes), in any log record at DEBUG,
or in any piece yielded, text returned, tool call or ``partial_text``.
"""

from __future__ import annotations

import json
import logging
import string
import traceback
from typing import Any

import pytest
from fault_server import FakeClock, FaultServer, Raw, Reply, Stream, completion, error_body
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules import OnlineChatModule
from modules.errors import ModuleError
from modules.online.retry import RetryPolicy

ALPHABET = string.ascii_letters + string.digits + "-_.~+/=\"\\'"


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


def escaped(text: str) -> str:
    """``text`` as a JSON string literal with every character \\u-escaped (valid JSON, no literal key)."""
    return '"' + "".join(f"\\u{ord(c):04x}" for c in text) + '"'


def encode(value: Any, secret: str, escape: bool) -> str:
    text = json.dumps(value)
    return text.replace(json.dumps(secret), escaped(secret)) if escape else text


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c for c in cuts if 0 < c < len(text)})
    edges = [0, *points, len(text)]
    return [text[a:b] for a, b in zip(edges, edges[1:])]


def event(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def sse(chunks: list[str]) -> list[bytes]:
    return [f"data: {c}\n\n".encode() for c in chunks]


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[str, str, list[Any], bool]:
    """(api key, x-api-key header value, server script, stream?) with one of them placed somewhere."""
    key = "sk-" + draw(st.text(ALPHABET, min_size=10, max_size=30))
    other = "hk-" + draw(st.text(ALPHABET, min_size=10, max_size=30))
    secret = draw(st.sampled_from([key, other]))
    escape = draw(st.booleans())
    cuts = draw(st.lists(st.integers(0, 80), max_size=6))
    place = draw(
        st.sampled_from(
            [
                "request-id",
                "error-field",
                "error-key",
                "error-text",
                "content",
                "tool-call",
                "not-json",
                "wrong-shape",
                "stream-split",
                "stream-cut",
                "stream-error-event",
                "stream-tool-args",
                "body-anywhere",
                "raw-bad-chunk-size",
                "raw-status-line",
                "raw-header-line",
            ]
        )
    )
    status = draw(st.sampled_from([400, 401, 429, 500]))
    text = (
        draw(st.text(string.ascii_letters + " ", max_size=5)) + secret + draw(st.text(string.ascii_letters, max_size=5))
    )
    script: list[Any]
    if place == "request-id":
        headers = {"x-request-id": f"req_{secret}", "x-other": secret}
        script = [Reply(status, error_body("nope"), headers=headers)] * 2
    elif place in ("error-field", "error-key"):
        err = error_body("nope")
        field = draw(st.sampled_from(["message", "type", "code", "param"]))
        if place == "error-field":
            err["error"][field] = text
        else:
            err["error"][field] = {secret: 1}
        script = [Reply(status, encode(err, text if place == "error-field" else secret, escape),
                        headers={"Content-Type": "application/json"})] * 2  # fmt: skip
    elif place == "body-anywhere":  # any value, or a new key, at any depth of a success or error body
        body = draw(st.sampled_from([completion("ok", tool_calls=[CALL]), error_body("nope"), STREAM_CHUNK]))
        body = json.loads(json.dumps(body))
        path = draw(st.sampled_from(paths(body)))
        parent = body
        for step in path:
            parent = parent[step]
        if isinstance(parent, dict) and draw(st.booleans()):
            parent[secret] = text
        elif path:
            holder = body
            for step in path[:-1]:
                holder = holder[step]
            holder[path[-1]] = text
        else:
            body = text
        code = draw(st.sampled_from([200, status]))
        if body is not None and draw(st.booleans()) and code == 200:
            script = [Stream(sse([encode(body, text, escape), "[DONE]"]))]
            return key, other, script, True
        script = [Reply(code, encode(body, text, escape), headers={"Content-Type": "application/json"})] * 2
    elif place == "raw-bad-chunk-size":
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        script = [Raw(head + text.encode() + b"\r\n")] * 2
        return key, other, script, draw(st.booleans())
    elif place == "raw-status-line":
        script = [Raw(f"HTTP/1.1 {text}\r\n\r\n".encode())] * 2
    elif place == "raw-header-line":
        script = [Raw(f"HTTP/1.1 200 OK\r\n{text}\r\n\r\n".encode())] * 2
    elif place == "error-text":
        script = [Reply(status, f"denied for {text}")] * 2
    elif place == "content":
        script = [Reply(200, encode(completion(text), text, escape), headers={"Content-Type": "application/json"})]
    elif place == "tool-call":
        call = {"id": text, "type": "function", "function": {"name": "f" + text, "arguments": text}}
        body = completion("", tool_calls=[call])
        script = [Reply(200, encode(body, text, escape), headers={"Content-Type": "application/json"})]
    elif place == "not-json":
        script = [Reply(200, f"<html>{text}</html>")]
    elif place == "wrong-shape":
        body = {"choices": [{"message": {"content": {"x": text}}}]}
        script = [Reply(200, encode(body, text, escape), headers={"Content-Type": "application/json"})]
    elif place in ("stream-split", "stream-cut"):
        chunks = [encode(event({"content": piece}), piece, escape) for piece in split(text, cuts)]
        if place == "stream-split":
            chunks += [json.dumps(event({}, "stop")), "[DONE]"]
        script = [Stream(sse(chunks), cut=place == "stream-cut")]
    elif place == "stream-error-event":
        chunks = [json.dumps(event({"content": piece})) for piece in split(text, cuts)[:-1]]
        chunks.append(encode({"error": {"message": text}}, text, escape))
        script = [Stream(sse(chunks))]
    else:  # stream-tool-args
        first = {"index": 0, "id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}
        chunks = [json.dumps(event({"tool_calls": [first]}))]
        chunks += [
            encode(event({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}), p, escape)
            for p in split(text, cuts)
        ]
        chunks += [json.dumps(event({}, "tool_calls")), "[DONE]"]
        script = [Stream(sse(chunks))]
    return key, other, script, place.startswith("stream")


CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
STREAM_CHUNK = event({"content": "x", "tool_calls": [{"index": 0, **CALL}]}, "stop")


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, (*prefix, i))
    return out


def exposures(exc: BaseException) -> list[str]:
    out = [str(exc), repr(exc), repr(exc.args), repr(vars(exc))]
    out.append("".join(traceback.format_exception(exc)))
    seen = exc.__cause__ or exc.__context__
    while seen is not None:
        out += [str(seen), repr(seen), repr(vars(seen))]
        seen = seen.__cause__ or seen.__context__
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenarios())
def test_an_echoed_key_never_reaches_errors_logs_or_answers(server, caplog, case):
    key, other, script, stream = case
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="urllib3")
    caplog.clear()
    server.script[:] = list(script)
    clock = FakeClock()
    policy = RetryPolicy(max_retries=1, sleep=clock.sleep, clock=clock.clock, random=lambda: 0.0)
    shown: list[str] = []
    with OnlineChatModule(
        base_url=server.base_url, model="m", api_key=key, headers={"x-api-key": other}, retry=policy
    ) as m:
        try:
            if stream:
                s = m.stream("hi")
                for piece in s:
                    shown.append(piece)
                shown += [s.text, repr(s.tool_calls), repr(s.message)]
            else:
                shown.append(repr(m("hi")))
        except ModuleError as exc:
            shown += exposures(exc)
            shown.append(repr(getattr(exc, "partial_text", "")))
    shown += [r.getMessage() for r in caplog.records]
    shown += ["".join(traceback.format_exception(*r.exc_info)) for r in caplog.records if r.exc_info]
    for secret in (key, other):
        assert [t for t in shown if secret in t] == []
    assert "".join(shown[: len(shown)]).count(key) == 0


@pytest.mark.parametrize("pieces", [2, 3, 5])
def test_a_key_split_across_stream_events_is_masked_in_pieces_and_partial_text(server, pieces):
    key = "sk-canary-7f3a9c2e5b8d1f4a6c0e"
    text = f"before {key} after"
    step = len(text) // pieces + 1
    chunks = [json.dumps(event({"content": text[i : i + step]})) for i in range(0, len(text), step)]
    server.script[:] = [Stream(sse([*chunks, json.dumps(event({}, "stop")), "[DONE]"])), Stream(sse(chunks), cut=True)]
    m = OnlineChatModule(base_url=server.base_url, model="m", api_key=key, max_retries=0)
    got = list(m.stream("hi"))
    assert "".join(got) == "before *** after" and all(key[:8] not in p for p in got)
    with pytest.raises(ModuleError) as info:
        list(m.stream("hi"))
    assert info.value.partial_text == "before *** after"  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None)
@given(
    key=st.text("ab-", min_size=4, max_size=8),
    text=st.text("ab- ", max_size=40),
    cuts=st.lists(st.integers(0, 60), max_size=8),
    copies=st.integers(0, 3),
)
def test_a_key_split_anywhere_in_streamed_text_never_leaves_the_stream_scrubber(key, text, cuts, copies):
    """Over a tiny alphabet (so keys overlap themselves and the text), pieces in = masked text out."""
    from modules.online.scrub import Scrubber, StreamScrubber

    full = (text + key) * copies + text
    scrubber = Scrubber([key])
    stream = StreamScrubber(scrubber)
    out = [stream.feed(piece) for piece in split(full, cuts)] + [stream.flush()]
    assert all(key not in piece for piece in out)
    assert key not in "".join(out)
