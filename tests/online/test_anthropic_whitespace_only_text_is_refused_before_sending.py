"""Text the Messages API refuses for its whitespace is refused here, by name, before anything is sent.

The API answers 400 to a turn whose only content is whitespace text (``"messages: text content
blocks must contain non-whitespace text"``) and to a body that ends with an assistant message, a
prefill, whose text ends in whitespace (``"messages: final assistant content cannot end with
trailing whitespace"``). Before, only a wholly empty turn was refused: ``" "`` as the input, or
``"\\n"`` as an answer in the history, went out and came back as the API's 400. A whitespace-only
block beside real text is accepted by the API and still sent. The loopback server checks the same
rules, so every body sent here is one the API takes.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st
from wire.anthropic import KEY, AnthropicServer

from modules import OnlineChatModule
from prompter import ChatPrompter
from prompter.conversation import Conversation
from prompter.errors import UnsupportedContentError
from prompter.messages import Message
from prompter.render.anthropic import render_anthropic

WHITESPACE = st.text(alphabet=st.sampled_from(" \t\n\r\u00a0\u2003\u3000"), min_size=1, max_size=8)


def module(server: AnthropicServer) -> OnlineChatModule:
    return OnlineChatModule("anthropic", model="claude-test", base_url=server.base_url, api_key=KEY)


def post(server: AnthropicServer, messages: list[dict[str, Any]]) -> requests.Response:
    body = {"model": "claude-test", "max_tokens": 10, "messages": messages}
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    return requests.post(server.base_url + "/v1/messages", json=body, headers=headers, timeout=10)


@pytest.mark.parametrize(
    ("messages", "said"),
    [
        ([{"role": "user", "content": " "}], "must contain non-whitespace text"),
        ([{"role": "user", "content": [{"type": "text", "text": "\n"}]}], "must contain non-whitespace text"),
        (
            [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Say: "}],
            "final assistant content cannot end with trailing whitespace",
        ),
    ],
    ids=["whitespace-string", "whitespace-block", "prefill-ending-in-a-space"],
)
def test_the_wire_server_refuses_what_the_api_refuses(messages: list[dict[str, Any]], said: str) -> None:
    with AnthropicServer() as server:
        answer = post(server, messages)
    assert answer.status_code == 400 and said in answer.json()["error"]["message"]


def test_the_wire_server_takes_what_the_api_takes() -> None:
    beside = [{"role": "user", "content": [{"type": "text", "text": " "}, {"type": "text", "text": "real"}]}]
    earlier = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok "}, {"role": "user", "content": "go"}]
    with AnthropicServer() as server:
        assert post(server, beside).status_code == 200
        assert post(server, earlier).status_code == 200


@settings(max_examples=60, deadline=None)
@given(WHITESPACE)
def test_a_whitespace_only_input_or_answer_is_a_typed_error_naming_it(blank: str) -> None:
    prompter = ChatPrompter(system="Be brief.")
    with pytest.raises(UnsupportedContentError, match=r"^input: .*a user message whose text is only whitespace"):
        prompter.generate_prompt(blank, format="anthropic")
    with pytest.raises(UnsupportedContentError, match=r"^history\[0\]: .*an assistant message whose text is only"):
        prompter.generate_prompt("hi", history=[("q", blank)], format="anthropic")  # the pair is history[0]


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=8).filter(str.strip), WHITESPACE)
def test_a_prefill_ending_in_whitespace_is_refused_and_without_it_is_sent(text: str, blank: str) -> None:
    prefill = text.rstrip() + blank
    with pytest.raises(UnsupportedContentError, match=r"^input\[1\]: .*a prefill.*strip the trailing whitespace"):
        render_anthropic(Conversation(current=(Message("user", "hi"), Message("assistant", prefill))))
    body = render_anthropic(Conversation(current=(Message("user", "hi"), Message("assistant", text.rstrip()))))
    assert body["messages"][-1] == {"role": "assistant", "content": text.rstrip()}
    followed = (Message("user", "hi"), Message("assistant", prefill), Message("user", "go"))
    assert render_anthropic(Conversation(current=followed))["messages"][1]["content"] == prefill  # not the last: sent


def test_the_module_refuses_before_sending_and_sends_a_blank_block_beside_text() -> None:
    with AnthropicServer() as server:
        with pytest.raises(UnsupportedContentError, match="only whitespace"):
            module(server)("  \n")
        with pytest.raises(UnsupportedContentError, match=r"history\[1\]"):
            module(server)("hi", history=[{"role": "user", "content": "q"}, {"role": "assistant", "content": "\n"}])
        assert server.received == []
        parts = [{"type": "text", "text": " "}, {"type": "text", "text": "real"}]
        module(server)([{"role": "user", "content": parts}])
        assert server.rejections == []
        sent = server.received[0].body["messages"][-1]["content"]
    assert sent == [{"type": "text", "text": " "}, {"type": "text", "text": "real"}]
