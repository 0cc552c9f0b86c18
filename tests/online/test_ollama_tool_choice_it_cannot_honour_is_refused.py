"""Ollama's ``/api/chat`` has no ``tool_choice`` and no ``parallel_tool_calls``: it drops them unread.

``tool_choice="none"`` was sent as given, and the model still called tools; a named
or ``"required"`` choice was silently ignored. Now only what Ollama does by itself
(``"auto"``, ``True``) is taken (and not sent); anything else is refused before
sending, as ``response_format`` is.
"""

from __future__ import annotations

from typing import Any

import pytest

from modules import OnlineChatModule
from modules.errors import ModuleConfigError

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
NAMED = {"type": "function", "function": {"name": "f"}}


@pytest.mark.parametrize("choice", ["none", "required", NAMED], ids=["none", "required", "named"])
def test_a_tool_choice_ollama_would_ignore_is_refused(choice: Any) -> None:
    with pytest.raises(ModuleConfigError, match=r"'tool_choice' is not supported by Ollama.*leave tools out"):
        OnlineChatModule("ollama", model="m").build_request("hi", tools=TOOLS, tool_choice=choice)


def test_parallel_tool_calls_false_is_refused() -> None:
    with pytest.raises(ModuleConfigError, match="'parallel_tool_calls' is not supported by Ollama"):
        OnlineChatModule("ollama", model="m").build_request("hi", tools=TOOLS, parallel_tool_calls=False)


def test_what_ollama_does_by_itself_is_taken_and_not_sent() -> None:
    body = OnlineChatModule("ollama", model="m").build_request(
        "hi", tools=TOOLS, tool_choice="auto", parallel_tool_calls=True
    ).body
    assert "tool_choice" not in body and "parallel_tool_calls" not in body and body["tools"]
