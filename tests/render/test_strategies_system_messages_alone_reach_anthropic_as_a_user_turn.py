"""System messages alone never reach Anthropic as ``messages: []`` (the API answers 400: messages may
not be empty, and must start with a user turn).

As for Gemini and DashScope (tests/render/test_strategies_system_messages_alone_end_on_a_user_turn.py),
``"chat"`` and ``"auto"`` fall back to the merged history, which is what AgentScope 0.1.6's
``AnthropicFormatter.format_multi_agent`` writes: the first system message is the system prompt, the
others ``system: text`` lines of one user message. A single system message leaves nothing for that user
turn: a typed error names the remedy instead of an empty body.
"""

from __future__ import annotations

from typing import Any

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter
from prompter.errors import UnsupportedContentError

SAID = [{"role": "system", "content": "Be brief."}, {"role": "system", "content": "Also kind."}]
MERGED = "## Conversation History\nsystem: Also kind."


@pytest.mark.parametrize("strategy", [None, "auto"])
def test_anthropic_gets_one_user_turn_from_system_messages_alone(strategy: Any) -> None:
    body = ChatPrompter(system="").generate_prompt(SAID, format="anthropic", strategy=strategy)
    CHECKS["anthropic"](body)
    expected = MERGED if strategy is None else [{"type": "text", "text": MERGED}]
    assert body == {"system": "Be brief.", "messages": [{"role": "user", "content": expected}]}


def test_anthropic_chat_strategy_writes_agentscope_s_multi_agent_output() -> None:
    body = ChatPrompter(system="").generate_prompt(SAID, format="anthropic", strategy="chat")
    CHECKS["anthropic"](body)
    # AgentScope 0.1.6: [{"role": "system", "content": "Be brief."}, {"role": "user", "content": [text block]}];
    # its wrapper lifts the system message into the top-level string
    assert body == {"system": "Be brief.", "messages": [{"role": "user", "content": [{"type": "text", "text": MERGED}]}]}


def test_a_system_prompter_and_history_system_messages_alone_still_reach_a_user_turn() -> None:
    body = ChatPrompter(system="Be brief.").generate_prompt(SAID[1:], format="anthropic")
    CHECKS["anthropic"](body)
    assert body["messages"] == [{"role": "user", "content": MERGED}]


def test_a_single_system_message_is_a_typed_error_naming_the_remedy() -> None:
    with pytest.raises(UnsupportedContentError, match="empty user message.*system messages alone make none"):
        ChatPrompter(system="").generate_prompt(SAID[:1], format="anthropic")


def test_a_label_still_ends_on_the_assistant_turn() -> None:
    body = ChatPrompter(system="").generate_prompt("Hi", history=SAID, format="anthropic", label="OK")
    assert body["messages"] == [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "OK"}]


def test_an_ordinary_anthropic_call_is_untouched() -> None:
    body = ChatPrompter(system="Be brief.").generate_prompt("Hi", history=SAID, format="anthropic")
    assert body == {"system": "Be brief.\nBe brief.\nAlso kind.", "messages": [{"role": "user", "content": "Hi"}]}
