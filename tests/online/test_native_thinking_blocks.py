"""With extended thinking on, Anthropic's thinking blocks go back first in the turn that called tools.

Anthropic requires the last assistant turn that called tools to open with the thinking block it
answered with, signature unchanged, or it answers 400. The answer came back in OpenAI's shape
without its thinking blocks, so the documented round trip (append ``response.message`` and the
tools' results to ``history``, call again) failed with ``thinking`` on. The blocks now ride in the
message's ``thinking_blocks`` (whole responses, streams, and a plain call's assistant dict) and the
anthropic dialect writes them first in the turn. The loopback server signs its thinking blocks
and refuses a tool-use turn that does not open with one of them, as the real API does.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from wire.anthropic import KEY, AnthropicServer

from modules import OnlineChatModule
from prompter import ChatPrompter
from prompter.errors import MessageError

WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
}
THINKING = {"thinking": {"type": "enabled", "budget_tokens": 2048}}


def _module(server: AnthropicServer) -> OnlineChatModule:
    return OnlineChatModule("anthropic", model="claude-test", base_url=server.base_url, api_key=KEY)


def _round_trip(module: OnlineChatModule, assistant: dict[str, Any], calls: list[Any]) -> Any:
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        assistant,
        *({"role": "tool", "tool_call_id": c["id"], "content": "18C"} for c in calls),
    ]
    before = copy.deepcopy(history)
    answer = module.respond("Thanks.", history=history, tools=[WEATHER], **THINKING)
    assert history == before  # nothing the caller passed is changed
    return answer


def test_a_whole_responses_thinking_blocks_go_back_with_its_tool_calls() -> None:
    with AnthropicServer() as server:
        module = _module(server)
        first = module.respond("Weather in Paris?", tools=[WEATHER], **THINKING)
        assert first.finish_reason == "tool_calls"
        assert first.thinking_blocks == (
            {"type": "thinking", "thinking": "The user wants the weather.", "signature": "EqQBCgIYAh0"},
        )
        assert first.message["thinking_blocks"] == list(first.thinking_blocks)
        second = _round_trip(module, first.message, list(first.tool_calls))  # refused without the block
        assert second.text == "Hello from Claude."
        sent = server.received[-1].body["messages"][1]["content"]
        assert sent[0] == {"type": "thinking", "thinking": "The user wants the weather.", "signature": "EqQBCgIYAh0"}
        assert sent[1]["type"] == "tool_use"


def test_a_streamed_answers_thinking_blocks_are_assembled_and_go_back() -> None:
    with AnthropicServer() as server:
        module = _module(server)
        stream = module.stream("Weather in Paris?", tools=[WEATHER], **THINKING)
        list(stream)
        response = stream.response
        assert response is not None and response.tool_calls
        assert response.thinking_blocks == (
            {"type": "thinking", "thinking": "The user wants the weather.", "signature": "EqQBCgIYAh0"},
        )
        assert _round_trip(module, response.message, list(response.tool_calls)).text == "Hello from Claude."


def test_a_plain_calls_assistant_dict_carries_them_too() -> None:
    with AnthropicServer() as server:
        module = _module(server)
        reply = module("Weather in Paris?", tools=[WEATHER], **THINKING)
        assert isinstance(reply, dict) and reply["thinking_blocks"][0]["signature"] == "EqQBCgIYAh0"
        assert _round_trip(module, dict(reply), reply["tool_calls"]).text == "Hello from Claude."


def test_without_thinking_no_blocks_are_added() -> None:
    with AnthropicServer() as server:
        first = _module(server).respond("Weather in Paris?", tools=[WEATHER])
        assert first.thinking_blocks == () and "thinking_blocks" not in first.message


def test_other_dialects_leave_thinking_blocks_out_and_bad_ones_are_refused() -> None:
    blocks = [{"type": "redacted_thinking", "data": "opaque"}]
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello", "thinking_blocks": blocks},
    ]
    p = ChatPrompter("You help.")
    anthropic = p.generate_prompt("more", history=history, format="anthropic")
    assert anthropic["messages"][1]["content"][0] == {"type": "redacted_thinking", "data": "opaque"}
    for fmt in ("openai", "gemini", "ollama"):
        assert "opaque" not in repr(p.generate_prompt("more", history=history, format=fmt))
    with pytest.raises(MessageError, match=r"thinking_blocks\[0\]: expected a block of type 'thinking'"):
        p.generate_prompt("more", history=[{"role": "assistant", "content": "x", "thinking_blocks": [{"type": "x"}]}])
    with pytest.raises(MessageError, match="only assistant messages carry thinking blocks"):
        p.generate_prompt("more", history=[{"role": "user", "content": "x", "thinking_blocks": blocks}])


def test_a_thinking_block_missing_a_field_neither_breaks_the_answer_nor_its_round_trip() -> None:
    from fault_server import FaultServer, Reply

    body = {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "thinking", "thinking": "summarised"}, {"type": "text", "text": "ok"}],
        "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 2},
    }  # fmt: skip
    with FaultServer() as server:
        server.script.append(Reply(200, body))
        module = OnlineChatModule("anthropic", model="m", base_url=server.base_url, api_key=KEY, max_retries=0)
        response = module.respond("hi")
    assert response.text == "ok" and response.thinking_blocks == ({"type": "thinking", "thinking": "summarised"},)
    sent = ChatPrompter("s").generate_prompt("more", history=[response.message], format="anthropic")
    assert sent["messages"][0]["content"][0] == {"type": "thinking", "thinking": "summarised"}
    with pytest.raises(MessageError, match=r"thinking_blocks\[0\]\.signature: expected str, got int"):
        ChatPrompter("s").generate_prompt(
            "x", history=[{"role": "assistant", "content": "y", "thinking_blocks": [{"type": "thinking", "signature": 1}]}]
        )
