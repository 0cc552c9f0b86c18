"""Ollama's native chat dialect (``POST /api/chat``): ``{"messages": [...], "tools": [...]}``.

What differs from OpenAI's chat completions:

* ``content`` is always a string (text parts joined with ``"\\n"``, as model
  templates join them); images travel beside it as
  ``images: [<base64>, ...]``, so only ``data:`` URLs can be sent (Ollama
  does not fetch URLs);
* tool calls are ``{"function": {"name", "arguments"}}`` with the arguments
  as an object, not a JSON string;
* a tool result names the function it answers (``tool_name``, found through
  the ``tool_call_id`` of the earlier call).

Roles and tools are OpenAI's; the model's own template orders the turns, so
no merging happens here. (Ollama's ``/v1`` endpoint speaks the ``openai``
dialect itself.)

>>> from prompter.conversation import Conversation
>>> render_ollama(Conversation(system="Be brief.", input="hi"))
{'messages': [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'hi'}]}
"""

from __future__ import annotations

import copy
import json
from typing import Any

from prompter.conversation import Conversation
from prompter.errors import UnsupportedContentError
from prompter.messages import ContentPart, Message, a_part
from prompter.render.common import (
    ResultNames,
    conversation_messages,
    refuse_cache_marks,
    split_data_url,
    tool_call_names,
)

__all__ = ["check_part", "image_data", "render_ollama"]


def image_data(part: ContentPart, where: str, endpoint: str = "/api/chat") -> str:
    """The base64 data of an image part, as Ollama's ``images`` take it (it fetches no URL and takes no audio
    or video): any other part is refused, naming ``where`` the caller gave it."""
    if part.type != "image_url":
        raise UnsupportedContentError(
            f"{where}: Ollama's {endpoint} takes images only (base64 data only), not {a_part(part.type)}; "
            "send the text alone (or use format='gemini' for audio and video)"
        )
    data = split_data_url(part.url, where)
    if data is None:  # the URL itself is not shown: a signed URL carries its key
        raise UnsupportedContentError(
            f"{where}: Ollama's {endpoint} takes images as base64 data only, not an image URL; "
            "download the image and pass its local path or a data: URL"
        )
    return data[1]


def check_part(part: ContentPart, where: str) -> None:
    """Ollama takes images as base64 data only, wherever the part stands."""
    image_data(part, where)


def _message(message: Message, where: str, names: ResultNames) -> dict[str, Any]:
    content = message.content
    images: list[str] = []
    if isinstance(content, str):
        text = content
    else:
        texts = []
        for k, part in enumerate(content):
            if part.type == "text":
                texts.append(part.text)
                continue
            images.append(image_data(part, f"{where}.content[{k}]"))
        text = "\n".join(texts)
    out: dict[str, Any] = {"role": message.role, "content": text}
    if images:
        out["images"] = images
    if message.tool_calls:
        out["tool_calls"] = [
            {"function": {"name": call.name, "arguments": copy.deepcopy(dict(call.arguments))}}
            for call in message.tool_calls
        ]
    if message.role == "tool":
        name = names.of(message)
        if name:
            out["tool_name"] = name
    return out


def render_ollama(conv: Conversation) -> dict[str, Any]:
    """The body of ``POST /api/chat`` (without ``model``, ``options`` and ``stream``)."""
    located = conversation_messages(conv)
    refuse_cache_marks(conv, located, "ollama")
    names = tool_call_names(located)
    messages: list[dict[str, Any]] = []
    if conv.system_text:
        messages.append({"role": "system", "content": conv.system_text})
    messages.extend(_message(message, where, names) for where, message in located)
    body: dict[str, Any] = {"messages": messages}
    if conv.tools is not None and len(conv.tools):
        body["tools"] = json.loads(conv.tools.json)
    return body
