"""The OpenAI chat-completions dialect: ``{"messages": [...], "tools": [...]}``.

Many providers speak it (DeepSeek, Qwen's compatible mode, Kimi, GLM, vLLM,
Ollama's /v1, ...). Its message list is also what a model's chat template
consumes, so the local text renderer starts from :func:`openai_messages`.
"""

from __future__ import annotations

from typing import Any

from prompter.conversation import Conversation
from prompter.errors import UnsupportedContentError
from prompter.messages import ContentPart, Message, a_part
from prompter.render.common import a_role, conversation_messages, media_parts

__all__ = [
    "check_part",
    "message_dict",
    "openai_messages",
    "refuse_assistant_media",
    "refuse_other_media",
    "render_openai",
    "text_parts",
    "tool_call_dicts",
]


def _content(content: str | tuple[ContentPart, ...]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for part in content:
        if part.type == "text":
            parts.append({"type": "text", "text": part.text})
        elif part.type == "image_url":
            image: dict[str, Any] = {"url": part.url}
            if part.detail is not None:
                image["detail"] = part.detail
            parts.append({"type": "image_url", "image_url": image})
        elif part.type == "audio" and (audio := _input_audio(part.url)) is not None:
            parts.append({"type": "input_audio", "input_audio": audio})
        else:  # the shape OpenAI-compatible servers (vLLM, Qwen) and chat templates take
            key = f"{part.type}_url"
            parts.append({"type": key, key: {"url": part.url}})
        if part.cache_control:  # as given: gateways to Claude read it (prompter.cache_marks)
            parts[-1]["cache_control"] = dict(part.cache_control)
    return parts


_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mp3": "mp3",
    "audio/mpeg": "mp3",
}


def _input_audio(url: str) -> dict[str, str] | None:
    """``{"data", "format"}`` for a base64 WAV or MP3 data URL (what ``input_audio`` takes); else None."""
    head, comma, data = url.partition(",")
    kind = head[5:].split(";")[0].lower() if head[:5].lower() == "data:" else ""
    fmt = _AUDIO_FORMATS.get(kind)
    if not comma or fmt is None or ";base64" not in head.lower():
        return None
    return {"data": data, "format": fmt}


def tool_call_dicts(message: Message, signatures: bool = False) -> list[dict[str, Any]]:
    """The assistant's tool calls in OpenAI's shape, arguments as JSON text; with *signatures* (the OpenAI
    dialect itself), a call that came with a Gemini thought signature carries it back in ``extra_content``,
    as Gemini's OpenAI-compatible API wants (the dialects built on this one leave it out)."""
    calls = []
    for call in message.tool_calls:
        item: dict[str, Any] = {
            "id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments_json}
        }  # fmt: skip
        if signatures and call.signature is not None:
            item["extra_content"] = {"google": {"thought_signature": call.signature}}
        calls.append(item)
    return calls


def message_dict(message: Message, keep_null: bool = False, signatures: bool = False) -> dict[str, Any]:
    """A fresh OpenAI message dict for ``message``.

    ``keep_null``: an assistant turn given with ``content: None`` (it only calls tools) keeps ``None``, as
    the caller and OpenAI's API write it; otherwise (dialects built on this one) it is ``""``.
    """
    content = None if keep_null and message.content_null else _content(message.content)
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.tool_calls:
        out["tool_calls"] = tool_call_dicts(message, signatures)
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    if message.cache_control:  # as given (prompter.cache_marks)
        out["cache_control"] = dict(message.cache_control)
    return out


def openai_messages(conv: Conversation, keep_null: bool = False, signatures: bool = False) -> list[dict[str, Any]]:
    """The conversation as a fresh list of OpenAI message dicts (``keep_null`` as in :func:`message_dict`)."""
    system = conv.system_text
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for turn in conv.history:
        if type(turn) is tuple:
            messages += ({"role": "user", "content": turn[0]}, {"role": "assistant", "content": turn[1]})
        else:
            messages.append(message_dict(turn, keep_null, signatures))  # type: ignore[arg-type]
    if conv.current:
        messages.extend(message_dict(m, keep_null, signatures) for m in conv.turn())
    else:
        messages.append({"role": "user", "content": conv.user + conv.input})
    if conv.label is not None:
        messages.append({"role": "assistant", "content": conv.label})
    return messages


def check_part(part: ContentPart, where: str, dialect: str = "openai", audio: bool = True) -> None:
    """OpenAI's chat completions take images and ``input_audio`` (base64 WAV or MP3 data) only, wherever
    the part stands: say so for any other part at ``where``, the caller's place (``audio=False``: no
    audio at all, as GLM)."""
    if part.type == "audio" and not audio:
        raise UnsupportedContentError(f"{where}: format={dialect!r} takes no audio; send the text alone")
    if part.type == "video" or (part.type == "audio" and _input_audio(part.url) is None):
        given = "video_url" if part.type == "video" else "audio_url"
        what = "audio as base64 WAV or MP3 data (a local .wav/.mp3 file)" if part.type == "audio" else "no video"
        raise UnsupportedContentError(
            f"{where}: format={dialect!r} takes {what}, not {a_part(given)}; "
            "use format='gemini' (or 'dashscope') for audio and video URLs"
        )


def refuse_other_media(conv: Conversation, dialect: str, audio: bool = True) -> None:
    """:func:`check_part` for every media part of the conversation, naming where the caller gave it."""
    if all(type(m) is not Message or type(m.content) is str for m in (*conv.history, *conv.current)):
        return  # text only (the common case), found without locating every message
    for where, part in media_parts(conversation_messages(conv)):
        check_part(part, where, dialect, audio)


def refuse_assistant_media(conv: Conversation, dialect: str, system: bool = False, tool: bool = False) -> None:
    """OpenAI's chat completions take only text (and ``refusal``) parts in an assistant message, and GLM's
    assistant ``content`` is a string: an image, audio or video part in an assistant turn is refused, naming
    where it is. (A *named* agent's turn with media never gets here: the ``"chat"`` strategy sends it
    inside a user turn, see :mod:`prompter.render.strategies`.) With *system*, a system message's too:
    OpenAI's system content parts are text only ("Image URLs are only allowed for messages with role
    'user'"). With *tool*, a tool message's too: OpenAI's tool content parts are text only."""
    remedies = {
        "assistant": "give it in a user message, or name the speaker (name=...) or pass strategy='multi_agent' to "
        "send the turn inside a user message",
        **({"system": "give it in a user message"} if system else {}),
        **({"tool": "send the tool's text result, then give the media in a user message after it"} if tool else {}),
    }
    several = len(conv.current) > 1
    located = [(f"history[{i}]", m) for i, m in enumerate(conv.history) if type(m) is Message]
    located += [(f"input[{j}]" if several else "input", m) for j, m in enumerate(conv.current)]
    for where, message in located:
        remedy = remedies.get(message.role)
        if remedy is None or isinstance(message.content, str):
            continue
        for k, part in enumerate(message.content):
            if part.type != "text":
                raise UnsupportedContentError(
                    f"{where}.content[{k}]: format={dialect!r} takes only text in {a_role(message.role)} message, "
                    f"not {a_part(repr(part.type))} (the API refuses it there); {remedy}"
                )


def render_openai(conv: Conversation) -> dict[str, Any]:
    """``{"messages": [...]}`` plus ``"tools"`` when the conversation has tools.

    Speakers' ``name``s are kept; images are ``image_url`` parts (a local file as a ``data:``
    URL), audio an ``input_audio`` part (base64 WAV or MP3); a video part is refused, and so is any
    part but text in an assistant, system or tool message (:func:`refuse_assistant_media`).
    """
    refuse_assistant_media(conv, "openai", system=True, tool=True)
    refuse_other_media(conv, "openai")
    messages = openai_messages(conv, keep_null=True, signatures=True)
    body: dict[str, Any] = {"messages": messages}
    if conv.tools is not None and len(conv.tools):
        body["tools"] = conv.tools.as_list()
    return body


def text_parts(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with the text of every system, user and assistant message given as a list of
    ``{"type": "text", "text": ...}`` parts, as AgentScope 0.1.x's OpenAI formatter writes it (the
    Chat Completions API reads a string and a one-part list alike). An empty text is one empty part, as
    there (an empty message is still a text block in AgentScope), except beside tool calls, where
    AgentScope has no text block; a tool result keeps its string and a null content stays null. A new body."""
    messages = [
        {**m, "content": [{"type": "text", "text": m["content"]}]}
        if m["role"] != "tool" and isinstance(m.get("content"), str) and (m["content"] or not m.get("tool_calls"))
        else m
        for m in body["messages"]
    ]
    return {**body, "messages": messages}
