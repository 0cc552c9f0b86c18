"""Gemini and DashScope want "the user [to] speak in the beginning and end of the input messages list" (the
AgentScope documentation of both wrappers; Gemini answers a model turn first with 400, for a function call
"function call turn comes immediately after a user turn or after a function response turn"). A history that
opens on the assistant's turn (a greeting, an agent's tool call before anyone spoke, the speaking agent's own
turn under ``as_agent=``) therefore falls back to the merged history under ``"chat"`` and ``"auto"``, as a
missing final user turn does, instead of a body those APIs refuse. Anthropic takes such a body and keeps it."""

from __future__ import annotations

import copy
import json

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter

CALL = {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
WEATHER = {"type": "function", "function": {"name": "weather", "parameters": {"type": "object", "properties": {}}}}
HISTORIES = {
    "greeting": [{"role": "assistant", "content": "Hello! How can I help?"}],
    "tool-call-first": [
        {"role": "assistant", "name": "Bob", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 18}'},
    ],
    "system-then-greeting": [
        {"role": "system", "content": "Use metric units."},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": "Ask away."},
    ],
}


@pytest.mark.parametrize("strategy", [None, "chat", "auto"], ids=["default", "chat", "auto"])
@pytest.mark.parametrize("history", list(HISTORIES), ids=list(HISTORIES))
@pytest.mark.parametrize("dialect", ["gemini", "dashscope"])
def test_a_history_opening_on_the_assistant_turn_becomes_a_body_the_api_accepts(dialect, history, strategy):
    given = HISTORIES[history]
    before = copy.deepcopy(given)
    body = ChatPrompter(system="Be brief.").generate_prompt(
        "What now?", history=given, format=dialect, strategy=strategy, tools=[WEATHER]
    )
    CHECKS[dialect](body)
    assert given == before
    turns = body["contents"] if dialect == "gemini" else [m for m in body["input"]["messages"] if m["role"] != "system"]
    assert turns[0]["role"] == "user"


@pytest.mark.parametrize("dialect", ["gemini", "dashscope"])
def test_the_speaking_agents_own_first_turn_is_kept_in_the_merged_history(dialect):
    history = [{"role": "user", "name": "Bob", "content": "I start."}]
    said = {"role": "user", "name": "Alice", "content": "Go on."}
    body = ChatPrompter(system="").generate_prompt(said, history=history, format=dialect, strategy="chat", as_agent="Bob")
    CHECKS[dialect](body)
    assert "Bob: I start.\nAlice: Go on." in json.dumps(body, ensure_ascii=False).replace("\\n", "\n")


@pytest.mark.parametrize("dialect", ["gemini", "dashscope"])
def test_a_history_opening_on_the_users_turn_keeps_its_turns(dialect):
    history = [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Hello!"}]
    body = ChatPrompter(system="").generate_prompt("Rain?", history=history, format=dialect, strategy="chat")
    CHECKS[dialect](body)
    turns = body["contents"] if dialect == "gemini" else body["input"]["messages"]
    assert [t["role"] for t in turns] == ["user", "model" if dialect == "gemini" else "assistant", "user"]


def test_anthropic_keeps_a_conversation_that_opens_on_the_assistant_turn():
    body = ChatPrompter(system="").generate_prompt("Hi.", history=HISTORIES["greeting"], format="anthropic", strategy="chat")
    CHECKS["anthropic"](body)
    assert [m["role"] for m in body["messages"]] == ["assistant", "user"]
