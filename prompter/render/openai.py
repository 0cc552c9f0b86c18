"""The OpenAI chat-completions dialect: ``{"messages": [...], "tools": [...]}``.

Many providers speak it (DeepSeek, Qwen's compatible mode, Kimi, GLM, vLLM,
Ollama's /v1, ...). Its message list is also what a model's chat template
consumes, so the local text renderer starts from :func:`openai_messages`.
"""

from __future__ import annotations

from typing import Any

from prompter.conversation import Conversation
from prompter.messages import ContentPart, Message

__all__ = ["message_dict", "openai_messages", "render_openai", "tool_call_dicts"]


def _content(content: str | tuple[ContentPart, ...]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for part in content:
        if part.type == "text":
            parts.append({"type": "text", "text": part.text})
        else:
            image: dict[str, Any] = {"url": part.url}
            if part.detail is not None:
                image["detail"] = part.detail
            parts.append({"type": "image_url", "image_url": image})
    return parts


def tool_call_dicts(message: Message) -> list[dict[str, Any]]:
    """The assistant's tool calls in OpenAI's shape, arguments as JSON text."""
    return [
        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments_json}}
        for call in message.tool_calls
    ]


def message_dict(message: Message, keep_null: bool = False) -> dict[str, Any]:
    """A fresh OpenAI message dict for ``message``.

    ``keep_null``: an assistant turn given with ``content: None`` (it only calls tools) keeps ``None``, as
    the caller and OpenAI's API write it; otherwise (dialects built on this one) it is ``""``.
    """
    content = None if keep_null and message.content_null else _content(message.content)
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.tool_calls:
        out["tool_calls"] = tool_call_dicts(message)
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def openai_messages(conv: Conversation, keep_null: bool = False) -> list[dict[str, Any]]:
    """The conversation as a fresh list of OpenAI message dicts (``keep_null`` as in :func:`message_dict`)."""
    system = conv.system_text
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for turn in conv.history:
        if type(turn) is tuple:
            messages += ({"role": "user", "content": turn[0]}, {"role": "assistant", "content": turn[1]})
        else:
            messages.append(message_dict(turn, keep_null))  # type: ignore[arg-type]
    if conv.current:
        messages.extend(message_dict(m, keep_null) for m in conv.turn())
    else:
        messages.append({"role": "user", "content": conv.user + conv.input})
    if conv.label is not None:
        messages.append({"role": "assistant", "content": conv.label})
    return messages


def render_openai(conv: Conversation) -> dict[str, Any]:
    """``{"messages": [...]}`` plus ``"tools"`` when the conversation has tools."""
    body: dict[str, Any] = {"messages": openai_messages(conv, keep_null=True)}
    if conv.tools is not None and len(conv.tools):
        body["tools"] = conv.tools.as_list()
    return body
