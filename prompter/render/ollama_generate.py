"""Ollama's plain-prompt dialect (``POST /api/generate``): ``{"prompt": "...", "images": [...]}``.

The whole conversation is one prompt string, as AgentScope's ``OllamaGenerationWrapper``
builds it: the system prompt, a blank line, the history header and one ``name: text`` line
per message (the strategy is always ``"multi_agent"``; see :mod:`prompter.render.strategies`).
Images travel beside it as base64 ``images``. ``/api/generate`` takes no tools, so a
conversation with tools is refused with the remedy (``format="ollama"``).

>>> from prompter.conversation import Conversation
>>> from prompter.render.strategies import arrange
>>> render_ollama_generate(arrange(Conversation(system="Be brief.", input="hi"), "ollama_generate"))
{'prompt': 'Be brief.\\n\\n## Conversation History\\nuser: hi'}
"""

from __future__ import annotations

from typing import Any

from prompter.conversation import Conversation
from prompter.errors import UnsupportedContentError
from prompter.messages import ContentPart
from prompter.render.common import conversation_messages, refuse_cache_marks
from prompter.render.ollama import image_data

__all__ = ["check_part", "render_ollama_generate"]


def check_part(part: ContentPart, where: str) -> None:
    """``/api/generate`` takes images as base64 data only, wherever the part stands."""
    image_data(part, where, "/api/generate")


def render_ollama_generate(conv: Conversation) -> dict[str, Any]:
    """The body of ``POST /api/generate`` (without ``model``, ``options`` and ``stream``)."""
    if conv.tools is not None and len(conv.tools):
        raise UnsupportedContentError(
            "tools: Ollama's /api/generate takes no tools; use format='ollama' (/api/chat) to offer tools"
        )
    texts: list[str] = [conv.system_text] if conv.system_text else []
    images: list[str] = []
    located = conversation_messages(conv)
    refuse_cache_marks(conv, located, "ollama_generate")
    for where, message in located:
        content = message.content
        if isinstance(content, str):
            texts.append(content)
            continue
        for k, part in enumerate(content):
            if part.type == "text":
                texts.append(part.text)
                continue
            images.append(image_data(part, f"{where}.content[{k}]", "/api/generate"))
    body: dict[str, Any] = {"prompt": "\n".join(text for text in texts if text)}
    if images:
        body["images"] = images
    return body
