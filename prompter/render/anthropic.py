"""The Anthropic Messages API dialect: ``{"system": ..., "messages": [...], "tools": [...]}``.

What differs from OpenAI's chat completions:

* the system prompt is a top-level ``system`` string (left out when empty);
  system messages found in the history are folded into it, since
  ``messages`` takes only the ``user`` and ``assistant`` roles;
* tool calls are ``tool_use`` blocks of the assistant message, with their
  arguments as an object (``input``);
* tool results are ``tool_result`` blocks of a *user* message;
* consecutive messages of one role are merged into one message of blocks
  (user and assistant must alternate: a run of tool results becomes one user
  message, and the question that follows them joins it after the results);
* images are ``image`` blocks whose source is a URL, or base64 data for a
  ``data:`` URL (JPEG, PNG, GIF or WebP);
* tools are ``{"name", "description", "input_schema"}``.

The helpers above ``render_anthropic`` (the conversation as a flat list of
messages, ``data:`` URL parsing, tool names by call id) are shared with the
other non-OpenAI dialects.

>>> from prompter.conversation import Conversation
>>> render_anthropic(Conversation(system="Be brief.", input="hi"))
{'system': 'Be brief.', 'messages': [{'role': 'user', 'content': 'hi'}]}
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote_to_bytes

from prompter.conversation import Conversation
from prompter.errors import MessageError, UnsupportedContentError
from prompter.messages import ContentPart, Message

__all__ = [
    "conversation_messages",
    "function_specs",
    "lift_system",
    "plain_text",
    "render_anthropic",
    "split_data_url",
    "tool_call_names",
]

Located = tuple[str, Message]
"""A message and where it came from (``history[2]``, ``input``, ``label``), for error messages."""


# ---- shared by the non-OpenAI dialects ---------------------------------------------------


def conversation_messages(conv: Conversation) -> list[Located]:
    """Every message after the system prompt, in order: history, the current turn, the label."""
    located: list[Located] = []
    for i, turn in enumerate(conv.history):
        where = f"history[{i}]"
        if isinstance(turn, Message):
            located.append((where, turn))
        else:
            question, answer = turn
            located.append((where, Message("user", question)))
            located.append((where, Message("assistant", answer)))
    if conv.current:
        if conv.user:
            located.append(("input", Message("user", conv.user)))
        several = len(conv.current) > 1
        located.extend((f"input[{j}]" if several else "input", m) for j, m in enumerate(conv.current))
    else:
        located.append(("input", Message("user", conv.user + conv.input)))
    if conv.label is not None:
        located.append(("label", Message("assistant", conv.label)))
    return located


def plain_text(content: str | tuple[ContentPart, ...], where: str, what: str) -> str:
    """The text of ``content``, for a place of the dialect (``what``) that takes no image."""
    if isinstance(content, str):
        return content
    for k, part in enumerate(content):
        if part.type != "text":
            raise UnsupportedContentError(
                f"{where}.content[{k}]: {what} cannot carry an image; send it as text"
            )
    return "".join(part.text for part in content)


def lift_system(conv: Conversation, located: Iterable[Located]) -> tuple[str, list[Located]]:
    """The system text (the conversation's, then any system messages, newline-joined) and the other messages.

    For APIs that take the system prompt apart from the messages.
    """
    texts = [conv.system_text] if conv.system_text else []
    rest: list[Located] = []
    for where, message in located:
        if message.role == "system":
            text = plain_text(message.content, where, "a system message")
            if text:
                texts.append(text)
        else:
            rest.append((where, message))
    return "\n".join(texts), rest


def tool_call_names(located: Iterable[Located]) -> dict[str, str]:
    """Function name by tool-call id, for the APIs whose tool results name the function."""
    return {call.id: call.name for _, message in located for call in message.tool_calls if call.id}


def split_data_url(url: str, where: str) -> tuple[str, str] | None:
    """``(media_type, base64_data)`` for a ``data:`` URL; None for any other URL.

    >>> split_data_url("data:image/png;base64,iVBORw0KGgo=", "input")
    ('image/png', 'iVBORw0KGgo=')
    """
    if url[:5].lower() != "data:":
        return None
    header, comma, data = url[5:].partition(",")
    if not comma:
        raise MessageError(f"{where}: malformed data URL (no ',' before the data)")
    media_type, *params = header.split(";")
    if not media_type:
        raise MessageError(f"{where}: the data URL names no media type; write data:image/png;base64,...")
    if "base64" in (p.strip().lower() for p in params):
        return media_type.strip().lower(), data.strip()
    return media_type.strip().lower(), base64.b64encode(unquote_to_bytes(data)).decode("ascii")


def function_specs(conv: Conversation) -> list[dict[str, Any]]:
    """Fresh copies of the ``function`` objects of the conversation's tools (``[]`` without tools)."""
    if conv.tools is None or not len(conv.tools):
        return []
    return [tool["function"] for tool in json.loads(conv.tools.json)]


# ---- Anthropic -----------------------------------------------------------------------------

_IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def _image_block(url: str, where: str) -> dict[str, Any]:
    data = split_data_url(url, where)
    if data is None:
        return {"type": "image", "source": {"type": "url", "url": url}}
    media_type, encoded = data
    if media_type not in _IMAGE_MEDIA_TYPES:
        raise UnsupportedContentError(
            f"{where}: Anthropic takes {', '.join(_IMAGE_MEDIA_TYPES)} images, not {media_type}"
        )
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": encoded}}


def _blocks(content: str | tuple[ContentPart, ...], where: str, images: bool = True) -> list[dict[str, Any]]:
    """Content blocks; empty text is left out (the API rejects empty text blocks)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for k, part in enumerate(content):
        here = f"{where}.content[{k}]"
        if part.type == "text":
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif images:
            blocks.append(_image_block(part.url, here))
        else:
            raise UnsupportedContentError(f"{here}: an Anthropic assistant message cannot carry an image")
    return blocks


def _content(
    content: str | tuple[ContentPart, ...], where: str, images: bool = True
) -> str | list[dict[str, Any]]:
    return content if isinstance(content, str) else _blocks(content, where, images)


def _message(message: Message, where: str) -> dict[str, Any]:
    if message.role == "tool":
        if not message.tool_call_id:
            raise MessageError(
                f"{where}: a tool result needs the tool_call_id of the call it answers "
                "(format='anthropic' sends it as tool_use_id)"
            )
        result = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": _content(message.content, where),
        }
        return {"role": "user", "content": [result]}
    if message.role == "user":
        return {"role": "user", "content": _content(message.content, where)}
    if not message.tool_calls:
        return {"role": "assistant", "content": _content(message.content, where, images=False)}
    blocks = _blocks(message.content, where, images=False)
    for k, call in enumerate(message.tool_calls):
        if not call.id:
            raise MessageError(
                f"{where}.tool_calls[{k}]: format='anthropic' needs an id on every tool call "
                "(it becomes the tool_use id)"
            )
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": copy.deepcopy(dict(call.arguments)),
            }
        )
    return {"role": "assistant", "content": blocks}


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return content


def _tool(function: Mapping[str, Any]) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": function["name"]}
    if "description" in function:
        tool["description"] = function["description"]
    tool["input_schema"] = function.get("parameters") or {"type": "object", "properties": {}}
    return tool


def render_anthropic(conv: Conversation) -> dict[str, Any]:
    """The body of ``POST /v1/messages`` (without ``model`` and ``max_tokens``)."""
    system, located = lift_system(conv, conversation_messages(conv))
    messages: list[dict[str, Any]] = []
    for where, message in located:
        item = _message(message, where)
        if messages and messages[-1]["role"] == item["role"]:
            merged = _as_blocks(messages[-1]["content"]) + _as_blocks(item["content"])
            messages[-1]["content"] = merged or ""
        else:
            messages.append(item)
    body: dict[str, Any] = {}
    if system:
        body["system"] = system
    body["messages"] = messages
    functions = function_specs(conv)
    if functions:
        body["tools"] = [_tool(function) for function in functions]
    return body
