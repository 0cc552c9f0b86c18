"""The body checkers hold each API to its documented rules, no stricter: Anthropic's Messages reference
states no rule on the first message's role, and combines consecutive user or assistant turns into one turn
rather than refusing them (so it shows user and assistant messages in any mix), and Gemini's ``Content`` puts no rule by role on media parts (image models answer
with ``inline_data`` in model turns that multi-turn editing sends back). What the documents do require
still fails: Gemini turns that do not alternate, media in an Anthropic assistant turn, a function call in a
Gemini user turn, a tool result with no call before it."""

from __future__ import annotations

from typing import Any

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter

PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_an_anthropic_conversation_may_open_with_an_assistant_turn():
    CHECKS["anthropic"]({"messages": [
        {"role": "assistant", "content": "Hello, I am Bob."},
        {"role": "user", "content": "Hi Bob."},
    ]})  # fmt: skip


def test_an_anthropic_history_opening_with_a_tool_call_renders_to_an_accepted_body():
    call = {"id": "toolu_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "P"}'}}
    history = [
        {"role": "assistant", "name": "Bob", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "18"},
    ]
    body = ChatPrompter(system="S").generate_prompt("What now?", history=history, format="anthropic")
    assert body["messages"][0]["role"] == "assistant"
    CHECKS["anthropic"](body)


def test_consecutive_anthropic_turns_of_one_role_are_accepted_as_the_api_combines_them():
    CHECKS["anthropic"]({"messages": [
        {"role": "user", "content": "Hi."},
        {"role": "user", "content": [{"type": "text", "text": "Are you there?"}]},
        {"role": "assistant", "content": "Yes."},
        {"role": "assistant", "content": "How can I help?"},
        {"role": "user", "content": "Hot today?"},
    ]})  # fmt: skip


def test_anthropic_tool_results_split_over_consecutive_user_messages_are_accepted():
    uses = [{"type": "tool_use", "id": f"toolu_{k}", "name": "weather", "input": {}} for k in (1, 2)]
    CHECKS["anthropic"]({"messages": [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": uses},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "21"}]},
    ]})  # fmt: skip


@pytest.mark.parametrize(
    "part",
    [
        {"inline_data": {"mime_type": "image/png", "data": PNG_B64}},
        {"file_data": {"mime_type": "image/jpeg", "file_uri": "https://example.com/cafe.jpg"}},
    ],
    ids=["inline_data", "file_data"],
)
def test_a_gemini_model_turn_may_carry_media(part):
    CHECKS["gemini"]({"contents": [
        {"role": "user", "parts": [{"text": "Draw a park."}]},
        {"role": "model", "parts": [{"text": "Here it is."}, part]},
        {"role": "user", "parts": [{"text": "Thanks."}]},
    ]})  # fmt: skip


def test_a_gemini_agents_image_in_a_chat_turn_renders_to_an_accepted_body():
    history = [
        {"role": "user", "name": "Alice", "content": "Show me."},
        {"role": "assistant", "name": "Bob", "content": [
            {"type": "text", "text": "The cafe."}, {"type": "image_url", "image_url": {"url": "https://example.com/cafe.jpg"}}]},
    ]  # fmt: skip
    body = ChatPrompter(system="").generate_prompt("Nice?", history=history, format="gemini", strategy="chat")
    assert body["contents"][1]["parts"][1] == {"file_data": {"mime_type": "image/jpeg", "file_uri": "https://example.com/cafe.jpg"}}
    CHECKS["gemini"](body)


STILL_REFUSED: list[tuple[str, dict[str, Any]]] = [
    ("anthropic", {"messages": []}),
    ("anthropic", {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": ""}]}),
    ("anthropic", {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}]}]}),
    ("anthropic", {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_9", "content": "18"}]}]}),
    ("gemini", {"contents": [{"role": "user", "parts": [{"functionCall": {"name": "f", "args": {}}}]}]}),
    ("gemini", {"contents": [{"role": "user", "parts": [{"text": "a"}]}, {"role": "user", "parts": [{"text": "b"}]}]}),
    ("gemini", {"contents": [{"role": "user", "parts": [{"text": "a"}]}, {"role": "model", "parts": [
        {"functionResponse": {"name": "f", "response": {}}}]}, {"role": "user", "parts": [{"text": "b"}]}]}),
]  # fmt: skip


@pytest.mark.parametrize(("dialect", "body"), STILL_REFUSED, ids=[f"{d}-{i}" for i, (d, _) in enumerate(STILL_REFUSED)])
def test_what_the_documents_require_still_fails_the_check(dialect, body):
    with pytest.raises(AssertionError):
        CHECKS[dialect](body)
