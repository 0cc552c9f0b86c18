"""A Gemini answer with no ``candidates`` (and no blocked prompt) is an :class:`APIResponseValidationError`.

A 2xx whole answer of ``{}``, or another API's answer (an OpenAI-compatible ``chat.completion`` from a
``base_url`` that points at the wrong server), became ``Response(text='')``: an empty answer, silently.
As for the openai and anthropic sources, a 2xx answer of the wrong shape raises, naming ``candidates``
and the remedy. A blocked prompt (``promptFeedback.blockReason``, no candidates) is still an answer
(``content_filter``). A stream none of whose events carried candidates ends with the same error rather
than as a stream cut short; a stream of candidates that ends before its finish is still cut short.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from fault_server import FaultServer, Reply, Stream, completion, sse_events

from modules import OnlineChatModule
from modules.errors import APIResponseValidationError, StreamInterruptedError
from modules.online.retry import RetryPolicy

USAGE = {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4}
NO_CANDIDATES = {
    "empty": {},
    "openai-answer": completion("Paris."),
    "feedback-without-a-block": {"promptFeedback": {"safetyRatings": []}, "usageMetadata": USAGE},
    "usage-only": {"usageMetadata": USAGE, "modelVersion": "gemini-test"},
}


def event(body: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(body)}\r\n\r\n".encode()


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


def gemini(server: FaultServer) -> OnlineChatModule:
    return OnlineChatModule(
        "gemini", model="gemini-test", base_url=server.base_url, api_key="AIza-test", retry=RetryPolicy(max_retries=0)
    )


@pytest.mark.parametrize("body", NO_CANDIDATES.values(), ids=NO_CANDIDATES.keys())
def test_a_whole_answer_without_candidates_is_a_shape_error(server, body):
    server.script[:] = [Reply(200, body), Reply(200, body)]
    m = gemini(server)
    with pytest.raises(APIResponseValidationError, match=r"at candidates: .*source='openai'"):
        m.respond("hi")
    with pytest.raises(APIResponseValidationError, match="at candidates"):
        list(m.stream("hi"))  # a stream answered as one JSON body is read as the whole answer
    m.close()


def test_a_blocked_prompt_is_still_an_answer(server):
    blocked = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": USAGE}
    server.script[:] = [Reply(200, blocked), Stream([event(blocked)])]
    m = gemini(server)
    answer = m.respond("hi")
    assert (answer.text, answer.finish_reason) == ("", "content_filter")
    pieces = list(m.stream("hi"))
    assert "".join(pieces) == ""
    m.close()


@pytest.mark.parametrize(
    "events",
    [
        sse_events("Paris.")[:-1],  # an OpenAI-compatible stream (its [DONE] left out: that is no JSON)
        [event({"usageMetadata": USAGE}), event({"modelVersion": "gemini-test"})],
        [event({})],
    ],
    ids=["openai-stream", "usage-only", "empty-object"],
)
def test_a_stream_whose_events_never_carry_candidates_is_a_shape_error(server, events):
    server.script[:] = [Stream(events), Stream(events)]
    m = gemini(server)
    with pytest.raises(APIResponseValidationError, match=r"stream has the wrong shape at candidates"):
        list(m.stream("hi"))

    async def drain() -> None:
        async for _ in m.astream("hi"):
            pass

    with pytest.raises(APIResponseValidationError, match="at candidates"):
        asyncio.run(drain())
    m.close()


def test_a_stream_of_candidates_without_its_finish_is_still_cut_short(server):
    first = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Par"}]}}]}
    server.script[:] = [Stream([event(first), event({"usageMetadata": USAGE})])]
    m = gemini(server)
    with pytest.raises(StreamInterruptedError) as caught:
        list(m.stream("hi"))
    assert caught.value.partial_text == "Par"
    m.close()
