"""Zhipu AI's GLM dialect (``POST /api/paas/v4/chat/completions``): ``{"messages": [...], "tools": [...]}``.

GLM speaks OpenAI's chat completions: the same roles, ``tool_calls`` with
the arguments as a JSON string, tool results as ``role: "tool"`` messages
with their ``tool_call_id``, images as ``image_url`` parts (GLM-4V models; in
user messages only), tools as ``{"type": "function", "function": {...}}``.
The body keeps to the fields GLM documents: a message's ``name`` and an
image's ``detail`` are left out, and the ``content`` of a system, assistant
or tool message is a string (text parts newline-joined; an image there is
an :class:`~prompter.errors.UnsupportedContentError`).

>>> from prompter.conversation import Conversation
>>> render_zhipu(Conversation(system="Be brief.", input="hi"))
{'messages': [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'hi'}]}
"""

from __future__ import annotations

import json
from typing import Any

from prompter.conversation import Conversation
from prompter.errors import UnsupportedContentError
from prompter.messages import a_part
from prompter.render.openai import openai_messages, refuse_assistant_media, refuse_other_media

__all__ = ["render_zhipu"]


def _text(parts: list[dict[str, Any]], where: str, role: str) -> str:
    """A list of text parts as the string GLM documents for a system, assistant or tool message."""
    for k, part in enumerate(parts):
        if part["type"] != "text":
            raise UnsupportedContentError(
                f"{where}.content[{k}]: format='zhipu' takes only text in a {role} message (its content is a "
                f"string), not {a_part(repr(part['type']))}; give it in a user message"
            )
    return "\n".join(part["text"] for part in parts)


def render_zhipu(conv: Conversation) -> dict[str, Any]:
    """The body of GLM's chat completions call (without ``model`` and generation options)."""
    refuse_assistant_media(conv, "zhipu")
    messages = openai_messages(conv)  # fresh dicts: trimmed in place
    refuse_other_media(messages, "zhipu", audio=False)
    for i, message in enumerate(messages):
        message.pop("name", None)
        content = message["content"]
        if isinstance(content, list) and message["role"] != "user":
            message["content"] = _text(content, f"messages[{i}]", message["role"])
        elif isinstance(content, list):
            for part in content:
                if part["type"] == "image_url":
                    part["image_url"].pop("detail", None)
    body: dict[str, Any] = {"messages": messages}
    if conv.tools is not None and len(conv.tools):
        body["tools"] = json.loads(conv.tools.json)
    return body
