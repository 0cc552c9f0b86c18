"""A Gemini stream's whole response carries the request id a plain call gives: Gemini's ``responseId``.

Gemini sends no request-id header; its id rides in every ``GenerateContentResponse`` as
``responseId``. ``m.respond(...)`` read it there, but ``stream.response.request_id`` (sync and
async) was None for the same answer, so a stream could not be traced back to its request.
"""

from __future__ import annotations

import asyncio

from wire.common import json_answer
from wire.gemini import KEY, GeminiServer

from modules import OnlineChatModule


def _module(server: GeminiServer) -> OnlineChatModule:
    return OnlineChatModule("gemini", model="gemini-test", base_url=server.base_url, api_key=KEY)


def test_a_gemini_stream_response_has_the_response_id_a_plain_call_has():
    with GeminiServer() as server, _module(server) as m:
        assert m.respond("hi").request_id == "resp-1"
        stream = m.stream("hi")
        assert "".join(stream) == "Hello from Gemini."
        assert stream.response is not None and stream.response.request_id == "resp-1"


def test_an_async_gemini_stream_response_has_the_response_id_too():
    async def main(m: OnlineChatModule) -> str | None:
        async with m.astream("hi") as stream:
            assert "".join([piece async for piece in stream]) == "Hello from Gemini."
        assert stream.response is not None
        return stream.response.request_id

    with GeminiServer() as server, _module(server) as m:
        assert asyncio.run(main(m)) == "resp-1"


def test_a_stream_answered_as_one_json_body_keeps_its_response_id():
    body = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "whole"}]}, "finishReason": "STOP"}],
        "modelVersion": "gemini-test",
        "responseId": "resp-json",
    }
    with GeminiServer() as server, _module(server) as m:
        server.script.append(json_answer(body))  # a server that ignores the stream and answers at once
        stream = m.stream("hi")
        assert "".join(stream) == "whole"
        assert stream.response is not None and stream.response.request_id == "resp-json"
