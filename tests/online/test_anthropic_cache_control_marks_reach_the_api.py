"""Prompt-caching marks (``cache_control``) given on parts and tools reach Anthropic's Messages API, against a
loopback server that checks them as the API documents them (``{"type": "ephemeral"}``, ``"ttl"`` ``"5m"`` or
``"1h"``, four at most per request). Before, the module dropped every mark: nothing was ever cached."""

from __future__ import annotations

import pytest
import requests
from wire.anthropic import KEY, AnthropicServer

from modules import OnlineChatModule
from prompter.errors import UnsupportedContentError

MARK = {"type": "ephemeral"}
TOOL = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}


def module(server: AnthropicServer) -> OnlineChatModule:
    return OnlineChatModule("anthropic", model="claude-test", base_url=server.base_url, api_key=KEY)


def test_marks_on_the_system_prompt_a_document_and_a_tool_are_sent_and_accepted() -> None:
    history = [
        {"role": "system", "content": [{"type": "text", "text": "A long policy.", "cache_control": MARK}]},
        {"role": "user", "content": [{"type": "text", "text": "A long document.", "cache_control": {**MARK, "ttl": "1h"}}]},
        {"role": "assistant", "content": "Read."},
    ]
    with AnthropicServer() as server:
        module(server)("Sum it up.", history=history, tools=[{**TOOL, "cache_control": MARK}])  # it answers a call
        assert server.rejections == []
        body = server.received[0].body
    assert body["system"][-1] == {"type": "text", "text": "A long policy.", "cache_control": MARK}
    assert body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["tools"][0]["cache_control"] == MARK


def test_a_fifth_mark_is_refused_before_anything_is_sent() -> None:
    parts = [{"type": "text", "text": f"part {i}", "cache_control": MARK} for i in range(5)]
    with AnthropicServer() as server:
        with pytest.raises(UnsupportedContentError, match="at most 4"):
            module(server)("hi", history=[{"role": "user", "content": parts}, {"role": "assistant", "content": "ok"}])
        assert server.received == []


@pytest.mark.parametrize(
    ("marks", "said"),
    [([MARK] * 5, "A maximum of 4 blocks with cache_control"), ([{**MARK, "ttl": "2h"}], "ttl")],
    ids=["five-marks", "another-ttl"],
)
def test_the_wire_server_refuses_what_the_api_refuses(marks: list[dict[str, str]], said: str) -> None:
    content = [{"type": "text", "text": f"part {i}", "cache_control": mark} for i, mark in enumerate(marks)]
    body = {"model": "claude-test", "max_tokens": 10, "messages": [{"role": "user", "content": content}]}
    with AnthropicServer() as server:
        answer = requests.post(
            server.base_url + "/v1/messages", json=body, headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"}, timeout=5
        )
    assert answer.status_code == 400 and said in answer.json()["error"]["message"]
