"""An agent's history may start with its own turn (Bob called a tool before anyone spoke). Anthropic's
Messages reference states no rule on the first message's role, so the loopback server accepts such a
body, sync, async and streamed, and combines turns of one role in a row into one turn, as the reference says."""

from __future__ import annotations

import asyncio
import json

import httpx
from wire.anthropic import KEY, AnthropicServer

from modules import OnlineChatModule

CALL = {"id": "toolu_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
HISTORY = [
    {"role": "assistant", "name": "Bob", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "toolu_1", "content": '{"temp_c": 18}'},
]
WEATHER = {"type": "function", "function": {"name": "weather", "parameters": {"type": "object", "properties": {}}}}


def test_a_history_opening_with_an_assistant_turn_is_accepted_sync_async_and_streamed():
    with AnthropicServer() as server:
        m = OnlineChatModule(source="anthropic", api_key=KEY, model="claude-test", base_url=server.base_url,
                             max_retries=0)  # fmt: skip
        with m:
            m("What now?", history=HISTORY, tools=[WEATHER])
            asyncio.run(m.acall("What now?", history=HISTORY, tools=[WEATHER]))
            list(m.stream("What now?", history=HISTORY, tools=[WEATHER]))
        assert server.rejections == [], [json.loads(r.body) for r in server.rejections]
        assert [r.body["messages"][0]["role"] for r in server.received] == ["assistant"] * 3


def test_turns_of_one_role_in_a_row_are_combined_into_one_turn():
    # "Consecutive user or assistant turns in your request will be combined into a single turn"
    with AnthropicServer() as server:
        body = {"model": "claude-test", "max_tokens": 16, "messages": [
            {"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}  # fmt: skip
        headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
        answer = httpx.post(f"{server.base_url}/v1/messages", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
