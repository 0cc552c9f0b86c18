"""docs/coming-from-agentscope.md: the sentences that claim a behaviour, each checked on the real parts."""

from __future__ import annotations

import copy
import inspect
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from prompter import ChatPrompter

DIALECTS = ("openai", "anthropic", "gemini", "ollama", "dashscope", "zhipu")
_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]), "content": _text},
    optional={"name": st.sampled_from(["alice", "bob", "carol"])},
)


@settings(max_examples=60, deadline=None)
@given(history=st.lists(_message, max_size=6), question=_text, dialect=st.sampled_from(DIALECTS))
def test_the_callers_messages_are_never_mutated(history: list[dict[str, Any]], question: str, dialect: str) -> None:
    before = copy.deepcopy(history)
    ChatPrompter(system="You are terse.").generate_prompt(question, history=history, format=dialect)
    assert history == before


def test_speaker_names_stay_in_openais_name_field() -> None:
    history = [{"role": "user", "name": "alice", "content": "Heal."}, {"role": "assistant", "name": "bob", "content": "Calm."}]
    body = ChatPrompter(system="S").generate_prompt("Who?", history=history, format="openai")
    assert [(m["role"], m.get("name")) for m in body["messages"]] == [
        ("system", None), ("user", "alice"), ("assistant", "bob"), ("user", None)]


def test_dialects_without_a_name_field_merge_a_group_conversation_into_name_lines() -> None:
    history = [{"role": "user", "name": "alice", "content": "Heal."}, {"role": "assistant", "name": "bob", "content": "Calm."}]
    for dialect in ("anthropic", "dashscope", "zhipu"):
        body = ChatPrompter(system="S").generate_prompt("Who?", history=history, format=dialect)
        messages = body["input"]["messages"] if dialect == "dashscope" else body["messages"]
        assert messages[-1]["content"].endswith("\nalice: Heal.\nbob: Calm.\nuser: Who?"), dialect


def test_building_a_prompt_is_a_plain_call_not_a_coroutine() -> None:
    p = ChatPrompter(system="S")
    assert not inspect.iscoroutinefunction(p.generate_prompt)
    assert isinstance(p.generate_prompt("hi", format="openai"), dict)


def test_an_api_body_is_never_cut() -> None:
    history = [[f"question {i} " * 50, f"answer {i} " * 50] for i in range(300)]
    for dialect in ("openai", "anthropic", "gemini"):
        text = str(ChatPrompter(system="S").generate_prompt("last", history=history, format=dialect))
        assert "question 0 " in text and "answer 299 " in text, dialect
