"""Anthropic answers a stop sequence of only whitespace (``"\\n"``, common with OpenAI) with a 400
("stop_sequences: each stop sequence must contain non-whitespace"). The module refuses it before sending,
with a typed error naming it and the remedy, and the loopback wire server refuses it as the API does;
a stop sequence with a visible character (whitespace around it included) is sent as given."""

from __future__ import annotations

import pytest
import requests
from wire.anthropic import KEY, AnthropicServer

from modules import OnlineChatModule
from modules.errors import ModuleConfigError

BLANK = ["\n", " ", "\t\n", "\u3000", ["END", "\n\n"]]


def module(server: AnthropicServer) -> OnlineChatModule:
    return OnlineChatModule("anthropic", model="claude-test", base_url=server.base_url, api_key=KEY)


@pytest.mark.parametrize("stop", BLANK, ids=["newline", "space", "tab-newline", "ideographic-space", "in-a-list"])
def test_a_whitespace_only_stop_sequence_is_refused_naming_the_remedy(stop):
    with AnthropicServer() as server:
        m = module(server)
        for call in (m, m.stream, m.respond):
            with pytest.raises(ModuleConfigError, match="only whitespace") as caught:
                call("hi", stop=stop)
            assert "max_tokens" in str(caught.value)
        assert server.received == []


def test_the_wire_server_refuses_it_as_the_api_does():
    with AnthropicServer() as server:
        body = {"model": "claude-test", "max_tokens": 10, "stop_sequences": ["\n"],
                "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip
        headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
        answer = requests.post(server.base_url + "/v1/messages", json=body, headers=headers, timeout=5)
        assert answer.status_code == 400 and "non-whitespace" in answer.json()["error"]["message"]


def test_a_stop_sequence_with_a_visible_character_is_sent_as_given():
    with AnthropicServer() as server:
        assert module(server)("hi", stop=["\nUser:", " END "]) == "Hello from Claude."
        assert server.received[0].body["stop_sequences"] == ["\nUser:", " END "]
        assert server.rejections == []
