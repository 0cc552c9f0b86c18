"""The merged history (``strategy="multi_agent"``, and ``ollama_generate`` always) sends "images, audio and
video of every message after the text" (docs/agents.md): an image in a tool result (a screenshot tool) and in
a leading system message (AgentScope's system ``Msg``, which becomes the system prompt) reach the body too,
in every dialect, and each body is one the API accepts. Before, both were dropped without a word."""

from __future__ import annotations

import json
from typing import Any

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter

PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
GIF_B64 = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="
DIALECTS = ["openai", "anthropic", "gemini", "ollama", "dashscope", "zhipu", "ollama_generate"]
HEADERS = ["## Conversation History", "## Dialogue History"]


def _image(b64: str, kind: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:image/{kind};base64,{b64}"}}


CALL = {"id": "call_1", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}
HISTORY = [
    {"role": "user", "name": "Alice", "content": "What is on the screen?"},
    {"role": "assistant", "name": "Bob", "content": None, "tool_calls": [CALL]},
]
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "taken"}, _image(PNG_B64, "png")]}


@pytest.mark.parametrize("header", HEADERS)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_image_in_a_tool_result_reaches_the_merged_history(dialect: str, header: str) -> None:
    body = ChatPrompter(system="Be brief.").generate_prompt(
        RESULT, history=HISTORY, format=dialect, strategy="multi_agent", history_header=header
    )
    CHECKS[dialect](body)
    text = json.dumps(body)
    assert PNG_B64 in text
    assert "taken" in text  # the result's text stays in its <tool_result> line


@pytest.mark.parametrize("header", HEADERS)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_image_in_a_leading_system_message_reaches_the_merged_history(dialect: str, header: str) -> None:
    system = {"role": "system", "content": [{"type": "text", "text": "Judge the picture."}, _image(GIF_B64, "gif")]}
    said = [system, {"role": "user", "name": "Alice", "content": "Here."}]
    body = ChatPrompter(system="").generate_prompt(said, format=dialect, strategy="multi_agent", history_header=header)
    CHECKS[dialect](body)
    text = json.dumps(body)
    assert GIF_B64 in text
    assert "Judge the picture." in text


def test_the_media_come_after_the_text_in_message_order() -> None:
    system = {"role": "system", "content": [{"type": "text", "text": "Judge."}, _image(GIF_B64, "gif")]}
    body = ChatPrompter(system="").generate_prompt(RESULT, history=[system, *HISTORY], format="anthropic",
                                                   strategy="multi_agent")  # fmt: skip
    assert body["system"] == "Judge."
    (message,) = body["messages"]
    kinds = [(block["type"], block.get("source", {}).get("media_type")) for block in message["content"]]
    assert kinds == [("text", None), ("image", "image/gif"), ("image", "image/png")]
