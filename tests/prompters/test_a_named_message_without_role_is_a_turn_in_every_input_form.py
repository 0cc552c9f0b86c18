"""A dict with a speaker ``name`` and ``content`` but no ``role`` (an agent's turn in AgentScope's memory)
is an assistant turn in every input form, the current turn given as one dict included.

docs/agents.md promises it for history dicts and the current turn "given as a message dict or a list
of them"; one dict was read as slot values and refused with UnexpectedKeyError.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import ChatPrompter
from prompter.errors import MissingSlotError

FORMATS = ["text", "openai", "anthropic", "gemini", "ollama", "ollama_generate", "dashscope", "zhipu"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("as_agent", [None, "Alice"])
def test_one_named_dict_renders_as_the_list_holding_it(fmt: str, as_agent: Any) -> None:
    p = ChatPrompter(system="Be brief.")
    turn = {"name": "Bob", "content": "Shall we go?"}
    one = p.generate_prompt(turn, format=fmt, as_agent=as_agent)  # type: ignore[arg-type]
    assert one == p.generate_prompt([turn], format=fmt, as_agent=as_agent)  # type: ignore[arg-type]
    assert turn == {"name": "Bob", "content": "Shall we go?"}


def test_its_speaker_reaches_the_openai_body() -> None:
    p = ChatPrompter(system="")
    body = p.generate_prompt({"name": "Bob", "content": "Hi", "url": None}, format="openai", as_agent="Alice")
    assert body == {"messages": [{"role": "user", "content": "Hi", "name": "Bob"}]}
    body = p.generate_prompt({"name": "Bob", "content": "Hi"}, format="openai")
    assert body == {"messages": [{"role": "assistant", "content": "Hi", "name": "Bob"}]}


def test_slots_named_name_and_content_are_still_slots() -> None:
    p = ChatPrompter("Greet {name}.", system="")
    body = p.generate_prompt({"name": "Bob", "content": "Hi"}, format="openai")
    assert body["messages"] == [{"role": "system", "content": "Greet Bob.\n\n"}, {"role": "user", "content": "Hi"}]
    with pytest.raises(MissingSlotError, match="topic"):
        ChatPrompter("About {topic}.").generate_prompt({"name": "Bob", "content": "Hi"})
