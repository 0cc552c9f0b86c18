"""DashScope's native generation dialect (Qwen): ``{"input": {"messages": [...]}, "parameters": {...}}``.

The same body serves ``.../services/aigc/text-generation/generation`` and,
when a message carries an image, ``.../multimodal-generation/generation``.
What differs from OpenAI's chat completions:

* the messages sit under ``input``; the tools under ``parameters`` (present
  only with tools; generation options are the caller's to add there);
* one system message, first: system messages found in the history are folded
  into it;
* ``content`` is a string (a message's text parts newline-joined);
* user and assistant must alternate, so consecutive messages of one role are
  merged (texts newline-joined);
* with an image, audio or video anywhere, every ``content`` is a list of
  ``{"text": ...}``, ``{"image": url}``, ``{"audio": url}`` and ``{"video": url}``
  items, as the multimodal models take it (the URL may be an ``http(s)``, a
  ``data:`` or, for a local file, a ``file://`` URL);
* a tool result carries the ``tool_call_id`` it answers and the function
  ``name``;
* an assistant message carries text only (the API's assistant ``content`` is
  the model's reply text): an image, audio or video part there is an
  :class:`~prompter.errors.UnsupportedContentError`, as for OpenAI and GLM.

Tool calls and tools are OpenAI's (arguments as a JSON string).

>>> from prompter.conversation import Conversation
>>> render_dashscope(Conversation(system="Be brief.", input="hi"))
{'input': {'messages': [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'hi'}]}}
"""

from __future__ import annotations

import json
from typing import Any

from prompter.conversation import Conversation
from prompter.messages import ContentPart, Message, text_of
from prompter.render.common import (
    ResultNames,
    conversation_messages,
    lift_system,
    refuse_cache_marks,
    tool_call_names,
)
from prompter.render.openai import refuse_assistant_media, tool_call_dicts

__all__ = ["render_dashscope", "text_items"]

Content = str | list[dict[str, str]]


_KEYS = {"text": "text", "image_url": "image", "audio": "audio", "video": "video"}


def _has_image(content: str | tuple[ContentPart, ...]) -> bool:
    return not isinstance(content, str) and any(part.type != "text" for part in content)


def _items(content: str | tuple[ContentPart, ...]) -> list[dict[str, str]]:
    if isinstance(content, str):
        return [{"text": content}]
    return [{_KEYS[part.type]: part.text if part.type == "text" else part.url} for part in content]


def _text(content: str | tuple[ContentPart, ...], where: str) -> str:
    """Text parts joined with ``"\\n"``, as model templates join them."""
    if isinstance(content, str):
        return content
    text_of(content, where)  # raises for an image part
    return "\n".join(part.text for part in content)


def _message(message: Message, where: str, names: ResultNames, multimodal: bool) -> dict[str, Any]:
    content: Content = _items(message.content) if multimodal else _text(message.content, f"{where}.content")
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.tool_calls:
        out["tool_calls"] = tool_call_dicts(message)
    if message.role == "tool":
        if message.tool_call_id:
            out["tool_call_id"] = message.tool_call_id
        name = names.of(message)
        if name:
            out["name"] = name
    return out


def _merge(first: Content, second: Content) -> Content:
    if isinstance(first, str) and isinstance(second, str):
        return "\n".join(text for text in (first, second) if text)
    return (_items(first) if isinstance(first, str) else first) + (
        _items(second) if isinstance(second, str) else second
    )


def render_dashscope(conv: Conversation) -> dict[str, Any]:
    """The body of DashScope's native generation call (without ``model`` and generation options)."""
    refuse_assistant_media(conv, "dashscope")
    located = conversation_messages(conv)
    refuse_cache_marks(conv, located, "dashscope")
    names = tool_call_names(located)
    system, located = lift_system(conv, located)
    multimodal = any(_has_image(message.content) for _, message in located)
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": [{"text": system}] if multimodal else system})
    for where, message in located:
        item = _message(message, where, names, multimodal)
        last = messages[-1] if messages else None
        if last is not None and last["role"] == item["role"] and item["role"] in ("user", "assistant"):
            last["content"] = _merge(last["content"], item["content"])
            if "tool_calls" in item:
                last["tool_calls"] = last.get("tool_calls", []) + item["tool_calls"]
        else:
            messages.append(item)
    body: dict[str, Any] = {"input": {"messages": messages}}
    if conv.tools is not None and len(conv.tools):
        body["parameters"] = {"tools": json.loads(conv.tools.json)}
    return body


def text_items(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with the text of every system, user and assistant message given as a list of
    ``{"text": ...}`` items, as AgentScope 0.1.x's DashScope formatter writes it (both generation
    endpoints read the list; the multimodal one requires it). An empty text is ``[{"text": ""}]``, as
    there, except beside tool calls (no text block in AgentScope: it stays ``""``); a tool result keeps
    its string. A new body."""
    messages = [
        {**m, "content": [{"text": m["content"]}]}
        if m["role"] != "tool" and isinstance(m["content"], str) and (m["content"] or not m.get("tool_calls"))
        else m
        for m in body["input"]["messages"]
    ]
    return {**body, "input": {**body["input"], "messages": messages}}
