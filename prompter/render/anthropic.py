"""The Anthropic Messages API dialect: ``{"system": ..., "messages": [...], "tools": [...]}``.

What differs from OpenAI's chat completions:

* the system prompt is a top-level ``system`` string (left out when empty), or a list of text blocks
  when a system message carries a prompt-caching mark (:mod:`prompter.cache_marks`);
  system messages found in the history are folded into it, since
  ``messages`` takes only the ``user`` and ``assistant`` roles;
* tool calls are ``tool_use`` blocks of the assistant message, with their
  arguments as an object (``input``); the message's ``thinking_blocks`` (from
  an answer with extended thinking on) come first in it, as the API requires;
* tool results are ``tool_result`` blocks of a *user* message;
* consecutive messages of one role are merged into one message of blocks
  (user and assistant must alternate: a run of tool results becomes one user
  message, and the question that follows them joins it after the results);
* images are ``image`` blocks whose source is a URL, or base64 data for a
  ``data:`` URL (JPEG, PNG, GIF or WebP);
* a turn without text (after merging), or whose text is only whitespace, is refused: the API
  rejects such text content, so :class:`~prompter.errors.UnsupportedContentError` names it instead
  (an assistant turn of tool calls only is fine); so is a body that ends with an assistant
  message (a prefill) whose text ends in whitespace, which the API rejects too;
* tools are ``{"name", "description", "input_schema"}``.

>>> from prompter.conversation import Conversation
>>> render_anthropic(Conversation(system="Be brief.", input="hi"))
{'system': 'Be brief.', 'messages': [{'role': 'user', 'content': 'hi'}]}
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from prompter.cache_marks import MAX_MARKS
from prompter.conversation import Conversation
from prompter.errors import MessageError, UnsupportedContentError
from prompter.messages import ContentPart, Message
from prompter.render.common import (
    conversation_messages,
    empty_turn_error,
    lift_system,
    split_data_url,
)

__all__ = ["check_part", "render_anthropic", "text_blocks", "tool_use_id"]

_IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_TOOL_ID = re.compile(r"[A-Za-z0-9_-]+")


def tool_use_id(call_id: str) -> str:
    """*call_id* as Anthropic takes a ``tool_use`` id (``^[a-zA-Z0-9_-]+$``; it answers 400 otherwise).

    Ids from other providers can hold other characters (Kimi's ``functions.get_weather:0``): each
    is replaced by ``_`` and a digest of the whole id is appended, so two ids stay two ids, and a
    call and its result, both rewritten here, still match.
    """
    if _TOOL_ID.fullmatch(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return re.sub(r"[^A-Za-z0-9_-]", "_", call_id) + "_" + digest


def _image_block(url: str, where: str) -> dict[str, Any]:
    data = split_data_url(url, where)
    if data is None:
        return {"type": "image", "source": {"type": "url", "url": url}}
    media_type, encoded = data
    if media_type not in _IMAGE_MEDIA_TYPES:
        raise UnsupportedContentError(
            f"{where}: Anthropic takes {', '.join(_IMAGE_MEDIA_TYPES)} images, not {media_type[:40]}; "
            "convert the image to PNG or JPEG"
        )
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": encoded}}


def check_part(part: ContentPart, where: str) -> None:
    """Anthropic takes images only (by URL, or as JPEG, PNG, GIF or WebP data), wherever the part stands."""
    if part.type != "image_url":
        raise UnsupportedContentError(
            f"{where}: the Anthropic Messages API takes no {part.type}; send images and text only "
            "(or use format='gemini' for audio and video)"
        )
    _image_block(part.url, where)


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
            elif part.cache_control:
                raise UnsupportedContentError(
                    f"{here}: an empty text part cannot carry cache_control (the API takes no empty text "
                    "block); mark the part before it"
                )
        elif part.type != "image_url":
            check_part(part, here)
        elif images:
            blocks.append(_image_block(part.url, here))
        else:
            raise UnsupportedContentError(f"{here}: an Anthropic assistant message cannot carry an image")
        if part.cache_control and (part.type != "text" or part.text):
            blocks[-1]["cache_control"] = dict(part.cache_control)
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
            "tool_use_id": tool_use_id(message.tool_call_id),
            "content": _content(message.content, where),
        }
        return {"role": "user", "content": [result]}
    if message.role == "user":
        return {"role": "user", "content": _content(message.content, where)}
    thinking = [dict(block) for block in message.thinking]  # first in the turn, as the API requires
    if not message.tool_calls and not thinking:
        return {"role": "assistant", "content": _content(message.content, where, images=False)}
    blocks = thinking + _blocks(message.content, where, images=False)
    for k, call in enumerate(message.tool_calls):
        if not call.id:
            raise MessageError(
                f"{where}.tool_calls[{k}]: format='anthropic' needs an id on every tool call "
                "(it becomes the tool_use id)"
            )
        blocks.append(
            {
                "type": "tool_use",
                "id": tool_use_id(call.id),
                "name": call.name,
                "input": copy.deepcopy(dict(call.arguments)),
            }
        )
    return {"role": "assistant", "content": blocks}


def _marked(item: dict[str, Any], message: Message, where: str) -> dict[str, Any]:
    """*item* (the API's message made from *message*) with the message's own cache mark on its last block."""
    if not message.cache_control:
        return item
    blocks = _as_blocks(item["content"])
    if not blocks:
        raise UnsupportedContentError(f"{where}.cache_control: the message has no content block to carry it")
    blocks[-1] = {**blocks[-1], "cache_control": dict(message.cache_control)}
    return {**item, "content": blocks}


def _check_text(blocks: list[dict[str, Any]], where: str, role: str, final: bool) -> None:
    """Refuse a turn the API refuses for its text: no block at all; text blocks only, each of whitespace
    only (\"text content blocks must contain non-whitespace text\"); a prefill (the body's last message, an
    assistant's) whose last text ends in whitespace (\"final assistant content cannot end with trailing
    whitespace\"). A whitespace-only block beside other content is accepted, as the API accepts it."""
    if not blocks:
        raise empty_turn_error(where, role, "anthropic")
    if all(b["type"] == "text" and not b["text"].strip() for b in blocks):
        raise empty_turn_error(where, role, "anthropic", blank=True)
    last = blocks[-1]
    if final and role == "assistant" and last["type"] == "text" and last["text"] != last["text"].rstrip():
        raise UnsupportedContentError(
            f"{where}: format='anthropic' cannot end the body with an assistant message (a prefill) whose text "
            f"ends in whitespace ({last['text'][-1]!r}; the API rejects it); strip the trailing whitespace "
            "(text.rstrip()), or end the conversation with a user turn"
        )


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return content


def _tool(given: Mapping[str, Any]) -> dict[str, Any]:
    function = given["function"]
    tool: dict[str, Any] = {"name": function["name"]}
    if "description" in function:
        tool["description"] = function["description"]
    tool["input_schema"] = function.get("parameters") or {"type": "object", "properties": {}}
    if "cache_control" in given:  # checked with the tools (prompter.cache_marks)
        tool["cache_control"] = given["cache_control"]
    return tool


def _system(conv: Conversation, located: list[tuple[str, Message]], system: str) -> str | list[dict[str, Any]]:
    """The top-level ``system``: the joined text, or text blocks when a system message or a part of one is
    marked for caching (the conversation's own system text first, then each system message's text parts)."""
    systems = [(where, m) for where, m in located if m.role == "system"]
    if not any(_carries_mark(message) for _, message in systems):
        return system
    blocks = [{"type": "text", "text": conv.system_text}] if conv.system_text else []
    for where, message in systems:
        blocks += _marked({"content": _blocks(message.content, where, images=False)}, message, where)["content"]
    return blocks


def _carries_mark(message: Message) -> bool:
    parts = () if isinstance(message.content, str) else message.content
    return bool(message.cache_control) or any(part.cache_control for part in parts)


def _count_marks(body: dict[str, Any]) -> None:
    """Refuse a body with more cache marks than the API takes (it answers 400)."""
    system = body.get("system")
    blocks = [*(system if isinstance(system, list) else []), *body.get("tools", [])]
    for message in body["messages"]:
        for block in _as_blocks(message["content"]):
            blocks += [block, *(_as_blocks(block["content"]) if block.get("type") == "tool_result" else [])]
    marks = sum(1 for block in blocks if "cache_control" in block)
    if marks > MAX_MARKS:
        raise UnsupportedContentError(
            f"cache_control: {marks} parts and tools carry it, and the Anthropic Messages API takes at most "
            f"{MAX_MARKS} cache breakpoints per request; keep the marks at the ends of the longest shared openings"
        )


def render_anthropic(conv: Conversation) -> dict[str, Any]:
    """The body of ``POST /v1/messages`` (without ``model`` and ``max_tokens``)."""
    every = conversation_messages(conv)
    text, located = lift_system(conv, every)
    system = _system(conv, every, text)
    messages: list[dict[str, Any]] = []
    wheres: list[str] = []  # where each message of the body began, for the error about an empty one
    for where, message in located:
        item = _marked(_message(message, where), message, where)
        if messages and messages[-1]["role"] == item["role"]:
            merged = _as_blocks(messages[-1]["content"]) + _as_blocks(item["content"])
            messages[-1]["content"] = merged or ""
            if not merged:
                wheres[-1] = where
        else:
            messages.append(item)
            wheres.append(where)
    for item, where in zip(messages, wheres):
        _check_text(_as_blocks(item["content"]), where, item["role"], final=item is messages[-1])
    body: dict[str, Any] = {}
    if system:
        body["system"] = system
    body["messages"] = messages
    if conv.tools is not None and len(conv.tools):
        body["tools"] = [_tool(tool) for tool in json.loads(conv.tools.json)]
    _count_marks(body)
    return body


def text_blocks(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with every message's text given as a list of text blocks, as AgentScope 0.1.x's
    Anthropic formatter writes it (the Messages API reads a string and one text block alike; the
    top-level ``system`` stays as rendered: a string, as AgentScope's wrapper sends it, unless a cache mark
    made it blocks). A new body."""
    messages = [
        {**m, "content": _as_blocks(m["content"])} if isinstance(m["content"], str) else m
        for m in body["messages"]
    ]
    return {**body, "messages": messages}
