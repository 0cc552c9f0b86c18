"""Any JSON a native provider might answer ends in a Completion / delta or a typed error, never a crash."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modules.base import Completion, StreamDelta
from modules.errors import APIResponseValidationError, StreamError
from modules.online.anthropic import ANTHROPIC
from modules.online.gemini import GEMINI
from modules.online.ollama import OLLAMA
from modules.online.ollama_generate import OLLAMA_GENERATE
from modules.online.sse import ServerSentEvent

DIALECTS = {"anthropic": ANTHROPIC, "gemini": GEMINI, "ollama": OLLAMA, "ollama_generate": OLLAMA_GENERATE}
WITH_TOOLS = sorted(set(DIALECTS) - {"ollama_generate"})  # /api/generate has no tool calls

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
names = st.sampled_from(
    ["type", "content", "text", "tool_use", "name", "input", "id", "stop_reason", "usage", "candidates", "parts",
     "functionCall", "args", "finishReason", "usageMetadata", "message", "tool_calls", "function", "arguments",
     "done", "done_reason", "index", "delta", "content_block", "partial_json", "input_json_delta", "text_delta",
     "message_start", "content_block_start", "content_block_delta", "message_delta", "error", "response"]
)  # fmt: skip
values = st.recursive(
    scalars | names, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=4), max_leaves=12
)

VALID = {
    "anthropic": {"content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                  "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 2}, "model": "c"},
    "gemini": {"candidates": [{"content": {"parts": [{"text": "hi"}, {"functionCall": {"name": "f", "args": {}}}]},
                               "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 1}},
    "ollama": {"message": {"content": "hi", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]},
               "done": True, "done_reason": "stop", "eval_count": 2},
    "ollama_generate": {"model": "l", "response": "hi", "done": True, "done_reason": "stop", "eval_count": 2,
                        "context": [1, 2]},
}  # fmt: skip


def test_a_valid_generate_answer_and_stream_parse():
    completion = OLLAMA_GENERATE.completion(VALID["ollama_generate"])
    assert completion.text == "hi" and completion.finish_reason == "stop" and completion.usage["completion_tokens"] == 2
    state, deltas = _fold("ollama_generate", STREAMS["ollama_generate"])
    assert "".join(d.text for d in deltas) == "hi" and deltas[-1].finish_reason == "stop" and state.complete


@pytest.mark.parametrize("source", WITH_TOOLS)
def test_a_valid_answer_parses(source):
    completion = DIALECTS[source].completion(VALID[source])
    assert completion.text == "hi" and completion.tool_calls[0]["function"] == {"name": "f", "arguments": "{}"}
    assert completion.finish_reason == "tool_calls"


@pytest.mark.parametrize("source", sorted(DIALECTS))
@settings(max_examples=150, deadline=None)
@given(data=values)
def test_any_json_answer_is_a_completion_or_a_validation_error(source, data):
    try:
        result = DIALECTS[source].completion(data)
    except APIResponseValidationError:
        return
    assert isinstance(result, Completion)


def _mutations(value):
    """``value`` with one leaf replaced, at every position: wrong shapes close to the right one."""
    if isinstance(value, dict):
        for key in value:
            for other in (None, 42, "x", [], {}):
                yield {**value, key: other}
            for inner in _mutations(value[key]):
                yield {**value, key: inner}
    elif isinstance(value, list):
        for i, item in enumerate(value):
            for inner in _mutations(item):
                yield [*value[:i], inner, *value[i + 1 :]]


@pytest.mark.parametrize("source", sorted(DIALECTS))
def test_every_one_leaf_mutation_of_a_valid_answer_is_handled(source):
    for data in _mutations(VALID[source]):
        try:
            DIALECTS[source].completion(data)
        except APIResponseValidationError:
            pass


@pytest.mark.parametrize("source", sorted(DIALECTS))
@settings(max_examples=150, deadline=None)
@given(events=st.lists(values, max_size=5), name=st.sampled_from(["message", "error", "ping", "message_stop"]))
def test_any_stream_events_are_deltas_or_typed_errors(source, events, name):
    state = DIALECTS[source].stream_state(lambda v: v)
    try:
        for event in events:
            delta = state.on_event(ServerSentEvent(data=json.dumps(event), event=name))
            assert delta is None or isinstance(delta, StreamDelta)
    except (APIResponseValidationError, StreamError):
        pass


STREAMS = {
    "anthropic": [
        {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {"input_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t", "name": "f",
                                                                        "input": {}}},  # fmt: skip
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{}"}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}},
        {"type": "message_stop"},
    ],
    "gemini": [
        {"candidates": [{"content": {"parts": [{"text": "hi"}]}}], "modelVersion": "g"},
        {"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": {}}}]}, "finishReason": "STOP"}],
         "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 2}},
    ],
    "ollama": [
        {"model": "l", "message": {"content": "hi"}, "done": False},
        {"model": "l", "message": {"content": "", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]},
         "done": True, "done_reason": "stop", "prompt_eval_count": 1, "eval_count": 2},
    ],
    "ollama_generate": [
        {"model": "l", "response": "h", "done": False},
        {"model": "l", "response": "i", "done": False},
        {"model": "l", "response": "", "done": True, "done_reason": "stop", "prompt_eval_count": 1, "eval_count": 2},
    ],
}


def _fold(source, events):
    state = DIALECTS[source].stream_state(lambda v: v)
    deltas = [state.on_event(ServerSentEvent(data=json.dumps(e), event=e.get("type", "message") if isinstance(e, dict) else "message")) for e in events]
    return state, [d for d in deltas if d is not None]


@pytest.mark.parametrize("source", WITH_TOOLS)
def test_a_valid_stream_folds_into_text_a_tool_call_and_usage(source):
    state, deltas = _fold(source, STREAMS[source])
    assert "".join(d.text for d in deltas) == "hi"
    (call,) = [c for d in deltas for c in d.tool_calls]
    assert call["function"] == {"name": "f", "arguments": "{}"}
    assert deltas[-1].finish_reason == "tool_calls" and state.complete
    assert state.usage["completion_tokens"] == 2


@pytest.mark.parametrize("source", sorted(DIALECTS))
def test_every_one_leaf_mutation_of_a_valid_stream_is_handled(source):
    events = STREAMS[source]
    for i, event in enumerate(events):
        for wrong in _mutations(event):
            try:
                _fold(source, [*events[:i], wrong, *events[i + 1 :]])
            except (APIResponseValidationError, StreamError):
                pass
