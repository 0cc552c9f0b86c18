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
from prompter.messages import ContentPart, a_part
from prompter.render.common import conversation_messages, refuse_cache_marks
from prompter.render.openai import check_part as check_openai_part
from prompter.render.openai import openai_messages, refuse_assistant_media, refuse_other_media

__all__ = ["check_part", "render_zhipu"]


def check_part(part: ContentPart, where: str) -> None:
    """GLM takes images only (no audio, no video), wherever the part stands."""
    check_openai_part(part, where, "zhipu", audio=False)


def _refuse_media_outside_user_turns(conv: Conversation) -> None:
    """The ``content`` of a system, assistant or tool message is a string for GLM: a part but text there is
    refused, naming where the caller gave it."""
    for where, message in conversation_messages(conv):
        if message.role == "user" or isinstance(message.content, str):
            continue
        for k, part in enumerate(message.content):
            if part.type != "text":
                raise UnsupportedContentError(
                    f"{where}.content[{k}]: format='zhipu' takes only text in a {message.role} message (its "
                    f"content is a string), not {a_part(repr(part.type))}; give it in a user message"
                )


def render_zhipu(conv: Conversation) -> dict[str, Any]:
    """The body of GLM's chat completions call (without ``model`` and generation options)."""
    refuse_cache_marks(conv, conversation_messages(conv), "zhipu")
    refuse_assistant_media(conv, "zhipu")
    refuse_other_media(conv, "zhipu", audio=False)
    _refuse_media_outside_user_turns(conv)
    messages = openai_messages(conv)  # fresh dicts: trimmed in place
    for message in messages:
        message.pop("name", None)
        content = message["content"]
        if isinstance(content, list) and message["role"] != "user":
            message["content"] = "\n".join(part["text"] for part in content)  # text parts only, checked above
        elif isinstance(content, list):
            for part in content:
                if part["type"] == "image_url":
                    part["image_url"].pop("detail", None)
    body: dict[str, Any] = {"messages": messages}
    if conv.tools is not None and len(conv.tools):
        body["tools"] = json.loads(conv.tools.json)
    return body
