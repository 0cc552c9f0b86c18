"""The SSE parser: the event-stream rules, under every chunking and every cut."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modules.errors import APIResponseValidationError, StreamError
from modules.online.sse import ChatStreamState, ServerSentEvent, SSEDecoder, iter_events


def parse(data: bytes) -> list[ServerSentEvent]:
    return list(iter_events([data]))


def parse_chunks(chunks: list[bytes]) -> list[ServerSentEvent]:
    return list(iter_events(chunks))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(b"data: hi\n\n", [ServerSentEvent("hi")], id="lf"),
        pytest.param(b"data: hi\r\n\r\n", [ServerSentEvent("hi")], id="crlf"),
        pytest.param(b"data: hi\r\r", [ServerSentEvent("hi")], id="cr"),
        pytest.param(b"data: a\r\ndata: b\rdata: c\n\n", [ServerSentEvent("a\nb\nc")], id="mixed-multiline"),
        pytest.param(b": ping\n\ndata: x\n\n", [ServerSentEvent("x")], id="comment-keepalive"),
        pytest.param(b":\n:ping\r\ndata: x\n:mid-event\ndata: y\n\n", [ServerSentEvent("x\ny")], id="comments"),
        pytest.param(b"data:nospace\n\n", [ServerSentEvent("nospace")], id="no-space-after-colon"),
        pytest.param(b"data:  two\n\n", [ServerSentEvent(" two")], id="only-one-space-removed"),
        pytest.param(b"data\n\n", [ServerSentEvent("")], id="field-without-colon"),
        pytest.param(b"event: error\ndata: {}\n\n", [ServerSentEvent("{}", event="error")], id="event-type"),
        pytest.param(b"id: 7\nretry: 3000\ndata: x\n\n", [ServerSentEvent("x", id="7", retry=3000)], id="id-retry"),
        pytest.param(b"retry: soon\ndata: x\n\n", [ServerSentEvent("x")], id="bad-retry-ignored"),
        pytest.param(b"foo: bar\ndata: x\n\n", [ServerSentEvent("x")], id="unknown-field-ignored"),
        pytest.param(b"event: ping\n\n", [], id="event-without-data-not-dispatched"),
        pytest.param(b"\xef\xbb\xbfdata: bom\n\n", [ServerSentEvent("bom")], id="leading-bom"),
        pytest.param(b"data: x\n", [], id="unterminated-event-discarded"),
        pytest.param(b"data: x", [], id="unterminated-line-discarded"),
        pytest.param("data: 日本 🎉\n\n".encode(), [ServerSentEvent("日本 🎉")], id="utf8"),
        pytest.param(b"data: a\n\n\n\ndata: b\n\n", [ServerSentEvent("a"), ServerSentEvent("b")], id="blank-lines"),
    ],
)
def test_event_stream_rules(raw, expected):
    assert parse(raw) == expected


def test_close_reports_a_discarded_partial_event():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: complete\n\ndata: partial") == [ServerSentEvent("complete")]
    assert decoder.close() is True
    decoder = SSEDecoder()
    decoder.feed(b"data: complete\n\n")
    assert decoder.close() is False


def test_cr_at_the_end_of_a_chunk_then_lf_is_one_line_ending():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\ndata: b\r") == []
    assert decoder.feed(b"\n\r") == [ServerSentEvent("a\nb")]  # \r\n ends "data: b", \r the event
    assert decoder.feed(b"\n") == []  # a lone \n after \r\r is a blank line: nothing pending


def test_a_utf8_character_split_across_chunks():
    raw = "data: é日🎉\n\n".encode()
    for cut in range(len(raw) + 1):
        assert parse_chunks([raw[:cut], raw[cut:]]) == [ServerSentEvent("é日🎉")], cut


STREAM = (
    ": hello\r\n\r\n"
    'data: {"choices": [{"index": 0, "delta": {"content": "Hé"}}]}\r\n\r\n'
    "event: message\nid: 1\n"
    'data: {"choices": [{"index": 0, "delta": {"content": "llo 🎉"}}]}\n\n'
    "data: multi\ndata: line\r\r"
    ": ping\n\n"
    "data: [DONE]\n\n"
).encode()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=30))
def test_any_chunking_gives_the_same_events(cuts):
    points = sorted(set(cuts))
    edges = [0, *points, len(STREAM)]
    chunks = [STREAM[a:b] for a, b in zip(edges, edges[1:])]
    assert parse_chunks(chunks) == parse(STREAM)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["\n", "\r", "\r\n"]),
            st.text(alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",))),
        ),
        min_size=1,
        max_size=6,
    ),
    st.data(),
)
def test_any_data_survives_any_line_endings_and_chunking(lines, data):
    """Values round-trip verbatim: multi-line data joined with \\n, whatever the line endings."""
    raw = "".join(f"data: {text}{eol}" for eol, text in lines) + lines[-1][0]
    blob = raw.encode()
    cuts = data.draw(st.lists(st.integers(0, len(blob)), max_size=10))
    edges = [0, *sorted(set(cuts)), len(blob)]
    events = parse_chunks([blob[a:b] for a, b in zip(edges, edges[1:])])
    assert events == [ServerSentEvent("\n".join(text for _, text in lines))]


def chunk(content: str | None = None, finish: str | None = None, **delta) -> ServerSentEvent:
    if content is not None:
        delta["content"] = content
    return ServerSentEvent(json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))


def test_chat_state_reads_text_finish_and_done():
    state = ChatStreamState()
    out = [state.on_event(e) for e in [chunk("", role="assistant"), chunk("a"), chunk("b", "stop")]]
    assert [d.text if d else None for d in out] == [None, "a", "b"]
    assert out[-1].finish_reason == "stop"
    assert state.complete and not state.done
    state.on_event(ServerSentEvent("[DONE]"))
    assert state.done and state.text == "ab"


def test_chat_state_ignores_other_choices_and_keeps_usage():
    state = ChatStreamState()
    state.on_event(ServerSentEvent(json.dumps({"choices": [{"index": 1, "delta": {"content": "no"}}]})))
    state.on_event(ServerSentEvent(json.dumps({"choices": [], "usage": {"total_tokens": 5}})))
    assert state.text == "" and state.usage == {"total_tokens": 5}


@pytest.mark.parametrize(
    "event",
    [
        pytest.param(ServerSentEvent('{"error": {"message": "quota"}}', event="error"), id="event-error"),
        pytest.param(ServerSentEvent('{"error": {"message": "quota"}}'), id="data-error"),
        pytest.param(ServerSentEvent("quota", event="error"), id="plain-text-error"),
    ],
)
def test_chat_state_error_events_raise_with_partial_text(event):
    state = ChatStreamState()
    state.on_event(chunk("part"))
    with pytest.raises(StreamError, match="quota") as info:
        state.on_event(event)
    assert info.value.partial_text == "part"


def test_chat_state_rejects_non_json_data():
    with pytest.raises(APIResponseValidationError):
        ChatStreamState().on_event(ServerSentEvent("not json"))
