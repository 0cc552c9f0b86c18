"""An Anthropic answer that used a server tool (web search): the stream sends the tool's input as
``input_json_delta`` events of a ``server_tool_use`` block, as the Messages streaming reference shows.
The stream must read like the whole answer does -- the text, no tool call for the caller -- instead of
failing as if the delta had no tool_use block to go to."""

from __future__ import annotations

from typing import Any

from wire.anthropic import KEY, AnthropicServer, sse
from wire.common import Answer, Received, json_answer, split_every

from modules import OnlineChatModule

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "Paris weather"}}
RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01",
          "content": [{"type": "web_search_result", "url": "https://example.com", "title": "Weather",
                       "encrypted_content": "abc", "page_age": None}]}  # fmt: skip
TEXT = "It is sunny in Paris."


class SearchingServer(AnthropicServer):
    """The wire server (the request validated as the API does), answering with a searched answer."""

    def handle(self, request: Received) -> Answer:
        super().handle(request)
        usage = {"input_tokens": 20, "output_tokens": 9}
        if not request.body.get("stream"):
            return json_answer({
                "id": "msg_01", "type": "message", "role": "assistant", "model": request.body["model"],
                "content": [SEARCH, RESULT, {"type": "text", "text": TEXT}], "stop_reason": "end_turn",
                "stop_sequence": None, "usage": usage,
            })  # fmt: skip
        start = {"id": "msg_01", "type": "message", "role": "assistant", "model": request.body["model"],
                 "content": [], "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}
        events: list[tuple[str, Any]] = [
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {**SEARCH, "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "input_json_delta", "partial_json": '{"query": '}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "input_json_delta", "partial_json": '"Paris weather"}'}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": RESULT}),
            ("content_block_stop", {"type": "content_block_stop", "index": 1}),
            ("content_block_start", {"type": "content_block_start", "index": 2,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 2,
                                     "delta": {"type": "text_delta", "text": TEXT}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 2}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": 9}}),
            ("message_stop", {"type": "message_stop"}),
        ]  # fmt: skip
        data = b"".join(sse(name, value) for name, value in events)
        return Answer(200, {"Content-Type": "text/event-stream"}, chunks=split_every(data, 11))


def test_a_streamed_server_tool_answer_reads_like_the_whole_one():
    with SearchingServer() as server:
        m = OnlineChatModule("anthropic", model="claude-test", base_url=server.base_url, api_key=KEY)
        whole = m.respond("Weather in Paris?")
        stream = m.stream("Weather in Paris?")
        assert "".join(stream) == TEXT == whole.text
        assert stream.response.tool_calls == whole.tool_calls == ()
        assert stream.response.finish_reason == whole.finish_reason == "stop"
        assert server.rejections == []
