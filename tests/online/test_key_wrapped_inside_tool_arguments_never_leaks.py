"""Threat: a server echoes the API key wrapped across lines inside a tool call's arguments.

OpenAI's dialect gives a tool call's arguments as JSON *text*, where a line break inside a string
is the escape ``\\n`` (a backslash and an ``n``), not a line break. The key wrapped there was
masked neither in the arguments nor in what ``json.loads`` of them gives the caller (the key,
with a line break in it). Property, over generated wraps (``\\n``, ``\\r\\n``, ``\\r``, spaces and
tabs around) and places, in a whole answer and in a stream whose argument deltas split anywhere,
over real HTTP on 127.0.0.1: the decoded arguments hold ``***`` where the key was, and the key
(whitespace taken out) is nowhere in the response.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules import OnlineChatModule
from modules.testing import LoopbackServer, RecordedRequest, write_response

KEY = "sk-CANARY-0123456789ABCDEFGHIJ"
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
gaps = st.builds(lambda a, b, c: a + b + c, st.text(" \t", max_size=2), st.sampled_from(["\n", "\r\n", "\r"]),
                 st.text(" \t", max_size=2))  # fmt: skip


@st.composite
def wrapped(draw: st.DrawFn) -> str:
    cuts = sorted(draw(st.sets(st.integers(1, len(KEY) - 1), min_size=1, max_size=2)))
    parts = [KEY[a:b] for a, b in zip([0, *cuts], [*cuts, len(KEY)])]
    return "".join(part + (draw(gaps) if i < len(parts) - 1 else "") for i, part in enumerate(parts))


def answer(arguments: str, stream: bool, splits: list[int]) -> bytes:
    call = {"index": 0, "id": "t1", "type": "function", "function": {"name": "f", "arguments": ""}}
    if not stream:
        call["function"]["arguments"] = arguments
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return json.dumps({"id": "c", "model": "m", "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls"}]}).encode()  # fmt: skip
    points = sorted({min(s, len(arguments)) for s in splits})
    pieces = [arguments[a:b] for a, b in zip([0, *points], [*points, len(arguments)])]
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}]
    chunks += [{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": p}}]}}]}
               for p in pieces]  # fmt: skip
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=wrapped(), before=st.text("abc \n", max_size=4), splits=st.lists(st.integers(0, 80), max_size=5))
def test_a_key_wrapped_inside_tool_call_arguments_is_masked(stream, key, before, splits):
    arguments = json.dumps({"note": before + key, key: 1})
    body = answer(arguments, stream, splits)

    def handler(request: RecordedRequest, sock) -> bool:
        kind = "text/event-stream" if stream else "application/json"
        write_response(sock, 200, body, {"Content-Type": kind})
        return True

    with LoopbackServer(handler) as server:
        m = OnlineChatModule(base_url=f"{server.base_url}/v1", model="m", api_key=KEY, max_retries=0)
        if stream:
            s = m.stream("hi", tools=TOOLS)
            assert list(s) == []
            response = s.response
        else:
            response = m.respond("hi", tools=TOOLS)
        m.close()
    assert response is not None
    decoded = json.loads(response.tool_calls[0]["function"]["arguments"])
    assert decoded == {"note": before + "***", "***": 1}
    assert KEY not in re.sub(r"\s|\\[nrt]", "", repr(response))
