"""The Gemini ``generateContent`` dialect: ``{"system_instruction", "contents", "tools"}``.

What differs from OpenAI's chat completions:

* the system prompt is ``system_instruction: {"parts": [{"text": ...}]}``
  (left out when empty); system messages found in the history are folded
  into it, since ``contents`` takes only the ``user`` and ``model`` roles;
* a message is ``{"role", "parts"}``; the assistant's role is ``model``;
* tool calls are ``functionCall`` parts (``name``, ``args`` as an object), with
  the call's ``thoughtSignature`` (``extra_content.google.thought_signature`` of
  the OpenAI-shaped call) beside it when it has one;
* a tool result is a ``functionResponse`` part of a ``user`` turn, naming the
  function (found through the ``tool_call_id`` of the earlier call) and
  carrying an object: the result itself when it is a JSON object, else
  ``{"content": text}``;
* consecutive turns of one role are merged into one turn of parts (so parallel
  tool results travel together, as the API expects);
* images, audio and video are ``inline_data`` (``data:`` URLs, local files) or ``file_data``
  (other URLs);
* a turn without text (after merging) is refused: the API rejects an empty
  text part, so :class:`~prompter.errors.UnsupportedContentError` names it
  instead (a model turn of function calls only is fine);
* tools are one ``{"function_declarations": [...]}`` entry.

>>> from prompter.conversation import Conversation
>>> body = render_gemini(Conversation(system="Be brief.", input="hi"))
>>> body["system_instruction"]
{'parts': [{'text': 'Be brief.'}]}
>>> body["contents"]
[{'role': 'user', 'parts': [{'text': 'hi'}]}]
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from prompter.conversation import Conversation
from prompter.errors import MessageError
from prompter.messages import ContentPart, Message
from prompter.render.common import (
    ResultNames,
    conversation_messages,
    empty_turn_error,
    function_specs,
    lift_system,
    plain_text,
    refuse_cache_marks,
    split_data_url,
    tool_call_names,
)
from prompter.render.media import EXTENSIONS

__all__ = ["check_part", "render_gemini"]

_ROLES = {"user": "user", "assistant": "model", "tool": "user"}

# The media type of a file_data part, where the URL's extension says it.
_IMAGE_EXTENSIONS = {
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "png": "image/png",
    "gif": "image/gif",
    "webp": "image/webp",
    "heic": "image/heic",
    "heif": "image/heif",
}


def check_part(part: ContentPart, where: str) -> None:
    """Gemini takes images, audio and video by URL or as data: only a malformed ``data:`` URL is refused."""
    split_data_url(part.url, where)


def _image_part(url: str, where: str, kind: str = "image_url") -> dict[str, Any]:
    data = split_data_url(url, where)
    if data is not None:
        return {"inline_data": {"mime_type": data[0], "data": data[1]}}
    extension = urlsplit(url).path.rpartition(".")[2].lower()
    media_type = _IMAGE_EXTENSIONS.get(extension) if kind == "image_url" else EXTENSIONS[kind].get(extension)
    if media_type is None:
        return {"file_data": {"file_uri": url}}
    return {"file_data": {"mime_type": media_type, "file_uri": url}}


def _content_parts(content: str | tuple[ContentPart, ...], where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for k, part in enumerate(content):
        if part.type == "text":
            if part.text:
                parts.append({"text": part.text})
        else:
            parts.append(_image_part(part.url, f"{where}.content[{k}]", part.type))
    return parts


def _response(text: str) -> dict[str, Any]:
    """A tool result as the object ``functionResponse.response`` must be."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or JSON nested past what Python reads: sent as text
        value = None
    return value if isinstance(value, dict) else {"content": text}


def _parts(message: Message, where: str, names: ResultNames) -> list[dict[str, Any]]:
    if message.role == "tool":
        name = names.of(message)
        if not name:
            raise MessageError(
                f"{where}: format='gemini' needs the function name of a tool result; give it the "
                "tool_call_id of an earlier tool call (or a 'name')"
            )
        text = plain_text(message.content, where, "a Gemini functionResponse")
        return [{"functionResponse": {"name": name, "response": _response(text)}}]
    parts = _content_parts(message.content, where)
    for call in message.tool_calls:
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": copy.deepcopy(dict(call.arguments))}}
        if call.signature is not None:
            part["thoughtSignature"] = call.signature  # Gemini 3 refuses its own call sent back without it
        parts.append(part)
    return parts or [{"text": ""}]


def _declaration(function: Mapping[str, Any]) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": function["name"]}
    if "description" in function:
        declaration["description"] = function["description"]
    parameters = function.get("parameters")
    # Gemini rejects an OBJECT schema without properties: a function without parameters omits them
    # (the type in either spelling: JSON Schema's "object" or Gemini's own "OBJECT").
    if isinstance(parameters, Mapping) and (
        parameters.get("properties") or str(parameters.get("type")).lower() != "object"
    ):
        declaration["parameters"] = parameters
    return declaration


def render_gemini(conv: Conversation) -> dict[str, Any]:
    """The body of ``POST .../models/{model}:generateContent`` (without ``generationConfig``)."""
    located = conversation_messages(conv)
    refuse_cache_marks(conv, located, "gemini")
    names = tool_call_names(located)
    system, located = lift_system(conv, located)
    contents: list[dict[str, Any]] = []
    wheres: list[tuple[str, str]] = []  # (where, role) of each turn's first message, for the error
    for where, message in located:
        role = _ROLES[message.role]
        parts = _parts(message, where, names)
        if contents and contents[-1]["role"] == role:
            merged = [p for p in contents[-1]["parts"] + parts if p != {"text": ""}]
            contents[-1]["parts"] = merged or [{"text": ""}]
            if not merged:
                wheres[-1] = (where, message.role)
        else:
            contents.append({"role": role, "parts": parts})
            wheres.append((where, message.role))
    for content, (where, role) in zip(contents, wheres):
        if content["parts"] == [{"text": ""}]:
            raise empty_turn_error(where, role, "gemini")
    body: dict[str, Any] = {}
    if system:
        body["system_instruction"] = {"parts": [{"text": system}]}
    body["contents"] = contents
    functions = function_specs(conv)
    if functions:
        body["tools"] = [{"function_declarations": [_declaration(function) for function in functions]}]
    return body
