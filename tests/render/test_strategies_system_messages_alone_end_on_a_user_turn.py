"""A conversation of system messages alone has no final user turn: where the dialect needs one
(Gemini, DashScope), ``"chat"`` and ``"auto"`` fall back to the merged history, as documented.

Before, Gemini got ``contents: []`` (the API answers 400: contents is not specified) and DashScope a
body ending on a system message (it wants a final user turn), as AgentScope 0.1.6's ``format_chat``
sends them; its ``format_multi_agent`` output is what is sent now.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import ChatPrompter

SAID = [{"role": "system", "content": "Be brief."}, {"role": "system", "content": "Also kind."}]
MERGED = "## Conversation History\nsystem: Also kind."


@pytest.mark.parametrize("strategy", [None, "chat", "auto"])
def test_gemini_gets_one_user_turn_from_system_messages_alone(strategy: Any) -> None:
    body = ChatPrompter(system="").generate_prompt(SAID, format="gemini", strategy=strategy)
    # AgentScope 0.1.6 GeminiFormatter.format_multi_agent, as google-generativeai sends it
    assert body == {"contents": [{"role": "user", "parts": [{"text": "Be brief.\n\n" + MERGED}]}]}


@pytest.mark.parametrize("strategy", ["chat", "auto"])
def test_dashscope_ends_on_a_user_turn_from_system_messages_alone(strategy: str) -> None:
    body = ChatPrompter(system="").generate_prompt(SAID, format="dashscope", strategy=strategy)
    # AgentScope 0.1.6 DashScopeFormatter.format_multi_agent
    assert body["input"]["messages"] == [
        {"role": "system", "content": [{"text": "Be brief."}]},
        {"role": "user", "content": [{"text": MERGED}]},
    ]


def test_a_system_prompter_with_no_input_still_keeps_its_empty_user_turn() -> None:
    # the common call is untouched: the user turn is there, only empty
    body = ChatPrompter(system="Be brief.").generate_prompt("Hi", format="gemini", strategy="chat")
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Hi"}]}]


def test_a_label_still_ends_the_conversation() -> None:
    body = ChatPrompter(system="").generate_prompt(SAID, format="gemini", strategy="chat", label="OK")
    assert body["contents"][-1] == {"role": "model", "parts": [{"text": "OK"}]}
