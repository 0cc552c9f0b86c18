"""Helpers shared by the dialects that are not OpenAI's (Anthropic, Gemini, Ollama, DashScope):
the conversation as a flat list of located messages, the system prompt lifted out of the history,
``data:`` URL parsing and tool names by call id."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import unquote_to_bytes

from prompter.conversation import Conversation
from prompter.errors import MessageError, ToolsError, UnsupportedContentError
from prompter.messages import ContentPart, Message
from prompter.strict_json import NotJSONError, strict_loads

__all__ = [
    "NO_CACHE_MARKS",
    "Located",
    "check_json_values",
    "conversation_messages",
    "empty_turn_error",
    "function_specs",
    "lift_system",
    "media_parts",
    "plain_text",
    "refuse_cache_marks",
    "split_data_url",
    "ResultNames",
    "tool_call_names",
]

Located = tuple[str, Message]
"""A message and where it came from (``history[2]``, ``input``, ``label``), for error messages."""


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
    current = conv.turn()
    several = len(current) > 1
    located.extend((f"input[{j}]" if several else "input", m) for j, m in enumerate(current))
    if conv.label is not None:
        located.append(("label", Message("assistant", conv.label)))
    return located


def media_parts(located: Iterable[Located]) -> Iterator[tuple[str, ContentPart]]:
    """Every image, audio and video part of the messages, with where it is (``history[2].content[1]``)."""
    for where, message in located:
        if not isinstance(message.content, str):
            for k, part in enumerate(message.content):
                if part.type != "text":
                    yield f"{where}.content[{k}]", part


def check_json_values(conv: Conversation) -> None:
    """An API body is JSON: tool-call arguments holding ``NaN`` or ``Infinity`` (which Python's json reads and
    writes, and every API refuses) or giving a key twice (the caller's text, which OpenAI's dialects send,
    and the parsed object, which the others send, would say different things) are a MessageError, and
    tools holding ``NaN`` or ``Infinity`` a ToolsError. (A local model's template reads them as its own
    ``tojson`` writes them, as transformers renders them: only API bodies are checked.)"""
    if conv.tools is not None and ("NaN" in conv.tools.json or "Infinity" in conv.tools.json):
        for i, tool in enumerate(json.loads(conv.tools.json)):  # each tool alone, to name the one at fault
            try:
                strict_loads(json.dumps(tool))
            except NotJSONError as exc:
                raise ToolsError(f"tools[{i}]: {exc}") from None
    # only messages with tool calls: pairs carry none, and the current turn's messages are conv.current
    located = [(f"history[{i}]", m) for i, m in enumerate(conv.history) if isinstance(m, Message) and m.tool_calls]
    several = len(conv.current) > 1
    located += [(f"input[{j}]" if several else "input", m) for j, m in enumerate(conv.current) if m.tool_calls]
    for where, message in located:
        for k, call in enumerate(message.tool_calls):
            try:
                strict_loads(call.arguments_json or "{}")
            except NotJSONError as exc:
                raise MessageError(f"{where}.tool_calls[{k}]: arguments are not valid JSON ({exc})") from None


def plain_text(content: str | tuple[ContentPart, ...], where: str, what: str) -> str:
    """The text of ``content`` (text parts joined with ``"\\n"``), for a place of the dialect
    (``what``) that takes no image."""
    if isinstance(content, str):
        return content
    for k, part in enumerate(content):
        if part.type != "text":
            raise UnsupportedContentError(
                f"{where}.content[{k}]: {what} cannot carry an image; send it as text"
            )
    return "\n".join(part.text for part in content)


def a_role(role: str) -> str:
    """``"a user"``, ``"an assistant"``: a role named in a sentence."""
    return f"{'an' if role == 'assistant' else 'a'} {role}"


def empty_turn_error(where: str, role: str, dialect: str, blank: bool = False) -> UnsupportedContentError:
    """The error for a user or assistant turn without text (*blank*: whose text is only whitespace), which
    Anthropic and Gemini reject."""
    remedy = (
        "give the conversation a user turn with text (system messages alone make none), or put the input in "
        "the user turn with a {'system': ..., 'user': ...} instruction "
        "(e.g. {'user': 'Translate {input} into French.'}), or use format='openai'"
        if role == "user"
        else "give the assistant message some text (or tool calls), or use format='openai'"
    )
    if blank:
        return UnsupportedContentError(
            f"{where}: format={dialect!r} cannot send {a_role(role)} message whose text is only whitespace (the "
            "API rejects text without a non-whitespace character); give it some text, or leave the message out, "
            "or use format='openai'"
        )
    return UnsupportedContentError(
        f"{where}: format={dialect!r} cannot send an empty {role} message (the API rejects empty text); {remedy}"
    )


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


NO_CACHE_MARKS = {
    "gemini": "Gemini",
    "ollama": "Ollama",
    "ollama_generate": "Ollama",
    "zhipu": "Zhipu's GLM API",
    "dashscope": "DashScope's native protocol",
}
"""The dialects whose APIs take no ``cache_control`` (see :mod:`prompter.cache_marks`), and their names."""


def refuse_cache_marks(conv: Conversation, located: Iterable[Located], dialect: str, texts_only: bool = False) -> None:
    """Refuse a content part or a tool marked with ``cache_control`` (see :mod:`prompter.cache_marks`) for a
    *dialect* whose API has no such field (:data:`NO_CACHE_MARKS`): sending it would be refused or ignored,
    and dropping it would lose what the caller asked for without a word. With *texts_only*, for a dialect that
    takes marks: refuse a marked text part, which a merge of the turns into one message leaves no block to
    stay on."""
    api = NO_CACHE_MARKS.get(dialect)
    if texts_only:
        remedy = (
            "the turns are merged into one message of 'name: text' lines here (strategy='multi_agent', or three "
            "speakers or more), which leaves a message's or a text part's mark no block of its own; remove the "
            "mark, or pass strategy='chat'"
        )
    else:
        remedy = f"{api} takes no cache_control (Anthropic's prompt-caching mark); remove it, or use format='anthropic'"
    for where, message in located:
        if message.cache_control:
            raise UnsupportedContentError(f"{where}.cache_control: {remedy}")
        for k, part in enumerate(() if isinstance(message.content, str) else message.content):
            if part.cache_control and (part.type == "text" or not texts_only):
                raise UnsupportedContentError(f"{where}.content[{k}].cache_control: {remedy}")
    if texts_only:
        return
    for i, tool in enumerate(conv.tools.specs if conv.tools is not None else ()):
        if "cache_control" in tool:
            raise UnsupportedContentError(f"tools[{i}].cache_control: {remedy}")


class ResultNames:
    """The function each tool result answers, for the APIs whose tool results name it: the name of the
    nearest call before the result with its ``tool_call_id`` (clients that number their calls per round
    reuse ``call_0``: each round's result answers that round's call), else the result's own ``name``."""

    def __init__(self, located: Iterable[Located]) -> None:
        latest: dict[str, str] = {}  # id -> the function of the latest call with it, so far
        self._messages = [message for _, message in located]  # alive while their ids key the table
        self._names: dict[int, str] = {}
        for message in self._messages:
            if message.role == "tool" and message.tool_call_id in latest:
                self._names.setdefault(id(message), latest[message.tool_call_id])
            for call in message.tool_calls:
                if call.id:
                    latest[call.id] = call.name

    def of(self, message: Message) -> str | None:
        """The function tool result *message* answers (None when neither a call nor the result names one)."""
        return self._names.get(id(message)) or message.name


def tool_call_names(located: Iterable[Located]) -> ResultNames:
    """The functions the tool results of *located* answer (see :class:`ResultNames`)."""
    return ResultNames(located)


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
