"""prompter.join against AgentScope's PromptEngine.join, read from its source.

AgentScope v0.0.4 and 0.0.6a2 (commit f0c159d, "Update version into 0.0.6a2") alike:
``src/agentscope/prompt.py`` ``PromptEngine.join`` / ``join_to_str`` / ``join_to_list`` and
``src/agentscope/utils/tools.py`` ``to_dialog_str`` / ``to_openai_dict`` / ``_convert_to_str``.
"""

from __future__ import annotations

from typing import Any

import pytest

import prompter
from prompter.errors import MessageError


def test_join_writes_dict_and_list_content_as_python_str_as_prompt_engine_does() -> None:
    """v0.0.4/0.0.6a2 ``utils/tools.py`` ``to_dialog_str``: ``f"{speaker}: {content}"``."""
    memory = [{"name": "Bot", "content": {"temp": 18, "ok": True}}, {"name": "Bot", "content": ["a", "b"]}]
    assert prompter.join("Forecast:", memory) == "Forecast:\nBot: {'temp': 18, 'ok': True}\nBot: ['a', 'b']"


def test_join_writes_content_without_a_speaker_as_python_str() -> None:
    """v0.0.4/0.0.6a2 ``to_dialog_str`` returns the content itself with no speaker, and ``join_to_str``'s
    ``"\\n".join`` then raises TypeError for a dict; prompter writes its ``str()`` as for a named one."""
    assert prompter.join({"content": {"temp": 18}}) == "{'temp': 18}"


def test_join_writes_none_inside_a_list_as_prompt_engine_does() -> None:
    """v0.0.4/0.0.6a2 ``prompt.py``: ``join`` drops top-level ``None`` only; ``join_to_str`` writes
    ``str(item)`` and ``join_to_list`` ``to_openai_dict({"content": str(item)})`` for one in a list."""
    assert prompter.join(None, ["a", None, "b"]) == "a\nNone\nb"
    assert prompter.join(None, ["a", None], as_messages=True) == [
        {"role": "assistant", "content": "a"},
        {"role": "assistant", "content": "None"},
    ]


@pytest.mark.parametrize(
    "value, written",
    [({"a": 1}, "{'a': 1}"), ([1, "x"], "[1, 'x']"), (None, "None"), (True, "True"), (2.5, "2.5")],
)
def test_join_format_map_values_are_written_as_str_format_map_writes_them(value: Any, written: str) -> None:
    """v0.0.4/0.0.6a2 ``prompt.py`` ``join_to_str``: ``prompt_str.format_map(format_map)``, which writes a
    value as ``format(value, "")``, its ``str()`` (prompter fills the string parts only, in one pass)."""
    assert prompter.join("Data: {d}", format_map={"d": value}) == f"Data: {written}"


def test_join_list_prompt_json_encodes_bool_content_as_to_openai_dict_does() -> None:
    """v0.0.4/0.0.6a2 ``utils/tools.py`` ``_convert_to_str``: bools, numbers, dicts and lists as JSON."""
    got = prompter.join([{"name": "Bot", "content": True}, {"name": "Bot", "content": [1, None]}], as_messages=True)
    assert [m["content"] for m in got] == ["true", "[1, null]"]


@pytest.mark.parametrize("as_messages", [False, True])
@pytest.mark.parametrize("message", [{"name": "Bob", "role": "assistant"}, {"name": "Bob", "content": None}])
def test_join_refuses_a_message_without_content_in_both_prompt_forms(
    message: dict[str, Any], as_messages: bool
) -> None:
    """v0.0.4/0.0.6a2 ``to_dialog_str`` writes the dict's repr (``str(item)``) and ``to_openai_dict`` a message
    without content (or ``"None"``): a deliberate difference (docs/agents.md), a typed error naming the part."""
    with pytest.raises(MessageError, match=r"parts\[1\]: a message needs 'content'"):
        prompter.join("Memory:", message, as_messages=as_messages)
