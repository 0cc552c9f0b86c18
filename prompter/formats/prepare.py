"""OpenAI-style messages through a chat template: validation, normalisation, tools, spans.

What a template sees is what ``transformers`` gives it (keys whose value is ``None`` dropped, a plain-data copy,
``reasoning_content``/``thinking`` aliased, ``bos_token``/``eos_token`` and the caller's keyword arguments as
variables), after three normalisations OpenAI-style callers need:

* an assistant's ``content: None`` (a tool-call turn) becomes ``""`` (kept, and so is a missing one,
  for a template that writes calls only then: DeepSeek-V3);
* a tool call's ``arguments`` given as a JSON string is parsed into a dict, so a template's ``| tojson`` does not
  encode it twice; except for a template that only takes them as a string (DeepSeek-R1 concatenates them): it
  gets the caller's own string, or the object as JSON text (:mod:`~prompter.formats.traits` tells which);
* a content list (``[{"type": "text", "text": ...}, ...]``) reaches a text-only template as its text parts joined
  with ``"\\n"``; an image, audio or video part there is an :class:`~prompter.errors.UnsupportedContentError`
  (a template naming ``image``, ``audio`` or ``video`` gets the list, each part as the caller gave it).

Tools never vanish: a template that does not read ``tools`` gets them as a block of text (:data:`TOOLS_PREAMBLE`
and one JSON schema per line) at the end of the system message, in a system message of their own when there is
none, or at the start of the first user message when the template cannot carry a system message.

A template that raises on a leading system message, or that renders without its
text (Mistral v0.3), gets that text folded into the first user message
(:func:`fold_system`): ``system + "\\n\\n" + user``.

``documents`` (a list of dicts, as transformers takes them) reach a template that reads them as its
``documents`` variable; any other template gets them as a block of text (:data:`DOCUMENTS_PREAMBLE` and one JSON
object per line) where the tools block would go. (``continue_final_message`` is
:mod:`~prompter.formats.continuation`'s.)

Messages are validated as the prompter validates them (:func:`prompter.messages.message_from_dict`): the role is
one of ``system``, ``user``, ``assistant``, ``tool``; a tool call names its function and its ``arguments`` are a
JSON object (or a string holding one); a text part has a str ``text``. Whatever is wrong raises
:class:`~prompter.errors.MessageError` naming ``messages[i]`` (and the tool call or part).
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Mapping, Sequence
from typing import Any

from prompter.errors import MessageError, ToolsError, UnsupportedContentError
from prompter.formats.plain_data import plain, plain_key, stored_items
from prompter.formats.sandbox import CompiledTemplate, render_template
from prompter.messages import Message, a_part, message_from_dict

__all__ = [
    "DOCUMENTS_PREAMBLE",
    "TOOLS_PREAMBLE",
    "fold_system",
    "inject_documents",
    "inject_tools",
    "prepare_documents",
    "plain",
    "prepare_messages",
    "prepare_tools",
    "render_jinja",
    "template_messages",
    "tools_text",
]

TOOLS_PREAMBLE = "# Tools\n\nYou may call the following functions. Their JSON schemas, one per line:\n"
"""The first line of the tools block given to templates that ignore ``tools``."""

DOCUMENTS_PREAMBLE = "# Documents\n\nUse the following documents. One JSON object per line:\n"
"""The first line of the documents block given to templates that ignore ``documents``."""


_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


def _text_parts(content: list[Any], where: str) -> str:
    texts = []
    for j, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            raise MessageError(f"{where}[{j}]: expected a content part dict, got {type(part).__name__}")
        kind = part.get("type", "text")
        if kind == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise MessageError(f"{where}[{j}]: a text part needs a str 'text', got {type(text).__name__}")
            texts.append(text)
        else:  # the caller's type shown short (a repr can be huge), or its type's name when it is no str
            raise UnsupportedContentError(
                f"{where}[{j}]: {a_part(str.__repr__(kind)[:40] if isinstance(kind, str) else type(kind).__name__)} "
                "cannot be rendered by this text-only chat template; send text only, or a model format that takes it"
            )
    return "\n".join(texts)


def _tool_call(call: Any, where: str, string_arguments: bool = False) -> Any:
    if not isinstance(call, dict):
        raise MessageError(f"{where}: expected a tool call dict, got {type(call).__name__}")
    call = {k: v for k, v in call.items() if v is not None}
    function = call.get("function")
    if isinstance(function, dict):
        function = {k: v for k, v in function.items() if v is not None}
        arguments = function.get("arguments")
        if string_arguments:
            if isinstance(arguments, dict):  # the caller's own string is kept as it is
                function["arguments"] = json.dumps(arguments, ensure_ascii=False)
        elif isinstance(arguments, str):
            try:
                parsed = json.loads(arguments)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                function["arguments"] = parsed
        call["function"] = function
    return call


def _validate(message: Mapping[str, Any], where: str) -> None:
    """The prompter's checks (role, tool calls, ids); content is checked by the caller.

    ``content: None`` is accepted for every role here (it renders as ``""``).
    """
    content = message.get("content")
    if isinstance(content, list):
        for j, part in enumerate(content):
            if isinstance(part, dict) and part.get("type", "text") == "text" and not isinstance(part.get("text"), str):
                raise MessageError(
                    f"{where}.content[{j}]: a text part needs a str 'text', got {type(part.get('text')).__name__}"
                )
    message_from_dict({**message, "content": ""}, where)


def prepare_messages(
    messages: Any, *, multimodal: bool, string_arguments: bool = False, none_content: bool = False
) -> list[dict[str, Any]]:
    """Validate OpenAI-style ``messages`` and return a normalised plain-data copy.

    Traits of the template: ``string_arguments`` (arguments as JSON text), ``none_content`` (calls keep None).
    """
    if not isinstance(messages, (list, tuple)) or not messages:
        got = "an empty list" if isinstance(messages, (list, tuple)) else type(messages).__name__
        raise MessageError(f"messages: expected a list of message dicts, at least one (as transformers), got {got}")
    out: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if type(message) is not dict and not isinstance(message, Mapping):
            raise MessageError(
                f"{where}: expected a message dict with 'role' and 'content', got {type(message).__name__}"
            )
        try:  # first a plain copy (a dict subclass's stored items): every check below reads the copy
            given: dict[str, Any] = {
                k if type(k) is str else plain_key(k, where): v
                if type(v) is str
                else plain(v, f"{where}.{k}" if type(k) is str else where)
                for k, v in (message.items() if type(message) is dict else stored_items(message, where))
            }
        except RecursionError:
            raise MessageError(_too_deep(where)) from None
        role = given.get("role")
        if role is None:
            raise MessageError(f"{where}: missing 'role' (one of 'system', 'user', 'assistant', 'tool')")
        if not isinstance(role, str):
            raise MessageError(f"{where}.role: expected str, got {type(role).__name__}")
        _validate(given, where)
        msg = {k: v for k, v in given.items() if v is not None}
        content = msg.get("content")
        if content is None:
            msg["content"] = None if none_content and role == "assistant" and given.get("tool_calls") else ""
        elif isinstance(content, list):
            if not multimodal:
                msg["content"] = _text_parts(content, f"{where}.content")
        elif not isinstance(content, str):
            raise MessageError(
                f"{where}.content: expected str, a list of content parts or None, got {type(content).__name__}; "
                "send the text the model reads (json.dumps(value) for a structured tool result)"
            )
        calls = msg.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise MessageError(f"{where}.tool_calls: expected a list, got {type(calls).__name__}")
            msg["tool_calls"] = [
                _tool_call(c, f"{where}.tool_calls[{j}]", string_arguments) for j, c in enumerate(calls)
            ]
        if "reasoning_content" in msg or "thinking" in msg or "reasoning" in msg:
            reasoning = next(msg[k] for k in _REASONING_FIELDS if k in msg)
            msg = {"thinking": reasoning, **msg, "reasoning_content": reasoning}
        out.append(msg)
    return out


def template_messages(
    messages: Sequence[Message], *, multimodal: bool, string_arguments: bool = False, none_content: bool = False
) -> list[dict[str, Any]]:
    """Neutral messages, validated once upstream, as the template reads them (no second validation).

    The same dicts :func:`prepare_messages` makes from the messages' OpenAI form: a tool
    call's arguments as the parsed object (or its JSON text, ``string_arguments``), text
    parts joined with ``"\\n"`` for a text-only template (``None`` content as given, ``none_content``).
    """
    out: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        content = message.content
        msg: dict[str, Any] = {"role": message.role}
        if none_content and message.content_null and message.tool_calls:
            msg["content"] = None
        elif isinstance(content, str):
            msg["content"] = content
        elif multimodal:
            msg["content"] = [_part_dict(part) for part in content]
        else:
            msg["content"] = _text_parts([_part_dict(part) for part in content], f"messages[{i}].content")
        if message.tool_calls:
            msg["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.arguments_json if string_arguments else json.loads(call.arguments_json),
                    },
                }
                for call in message.tool_calls
            ]
        if message.tool_call_id is not None:
            msg["tool_call_id"] = message.tool_call_id
        if message.name is not None:
            msg["name"] = message.name
        out.append(msg)
    return out


def _part_dict(part: Any) -> dict[str, Any]:
    """The part as the caller's dict gave it (audio stays audio), as :func:`prepare_messages` passes it on."""
    if part.type == "text":
        return {"type": "text", "text": part.text}
    form = part.form or f"{part.type.removesuffix('_url')}_url"  # made in code: its OpenAI form
    if form == "input_audio":  # kept as data:audio/<format>;base64,<data>
        head, _, data = part.url.partition(",")
        return {"type": form, form: {"data": data, "format": head[11:].partition(";")[0]}}
    if form in ("image", "audio", "video"):  # AgentScope's block: the URL beside the type
        return {"type": form, "url": part.url}
    media = {"url": part.url} if part.detail is None else {"url": part.url, "detail": part.detail}
    return {"type": form, form: media}


def prepare_tools(tools: Any) -> list[dict[str, Any]] | None:
    """Validate ``tools`` (a list of JSON-schema dicts) and copy it."""
    if tools is None:
        return None
    if not isinstance(tools, (list, tuple)):
        raise ToolsError(f"tools: expected a list of tool dicts, got {type(tools).__name__}")
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise ToolsError(f"tools[{i}]: expected a tool dict (a JSON schema), got {type(tool).__name__}")
    try:
        return [plain(tool, f"tools[{i}]") for i, tool in enumerate(tools)]
    except RecursionError:
        raise ToolsError(_too_deep("tools")) from None


def tools_text(tools: Sequence[Any]) -> str:
    """The tools block for templates that ignore ``tools``: preamble + one JSON schema per line."""
    return TOOLS_PREAMBLE + "\n".join(_json_line(tool, f"tools[{i}]", ToolsError) for i, tool in enumerate(tools))


def _json_line(value: Any, where: str, error: type[Exception]) -> str:
    """*value* as one line of JSON, or *error* naming *where* (an int past Python's 4,300-digit limit for
    writing one, a value nested past the stack)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError) as exc:
        raise error(f"{where}: cannot be written as JSON ({exc}); use a shorter number, or a string") from None


def _too_deep(where: str) -> str:
    return f"{where}: nested too deeply to copy (lists and dicts hundreds of levels deep); flatten it"


def prepare_documents(documents: Any) -> list[dict[str, Any]] | None:
    """Validate ``documents`` (a list of dicts, e.g. ``{"title": ..., "text": ...}``) and copy it."""
    if documents is None:
        return None
    if not isinstance(documents, (list, tuple)):
        raise MessageError(f"documents: expected a list of document dicts, got {type(documents).__name__}")
    for i, document in enumerate(documents):
        if not isinstance(document, Mapping):
            raise MessageError(
                f"documents[{i}]: expected a document dict (with 'title' and 'text'), got {type(document).__name__}"
            )
    try:
        return plain(list(documents), "documents")  # type: ignore[no-any-return]
    except RecursionError:
        raise MessageError(_too_deep("documents")) from None


def inject_documents(
    messages: list[dict[str, Any]], documents: Sequence[Any], *, system_ok: bool
) -> list[dict[str, Any]]:
    """Put the documents block where the tools block goes (a new list), for a template that ignores them."""
    lines = "\n".join(_json_line(document, f"documents[{i}]", MessageError) for i, document in enumerate(documents))
    return _inject(messages, DOCUMENTS_PREAMBLE + lines, system_ok=system_ok)


def inject_tools(messages: list[dict[str, Any]], tools: Sequence[Any], *, system_ok: bool) -> list[dict[str, Any]]:
    """Put the tools block into the conversation (a new list; ``messages`` is not changed)."""
    return _inject(messages, tools_text(tools), system_ok=system_ok)


def _inject(messages: list[dict[str, Any]], block: str, *, system_ok: bool) -> list[dict[str, Any]]:
    out = list(messages)
    if system_ok:
        if out and out[0].get("role") == "system":
            content = out[0].get("content") or ""
            if isinstance(content, list):
                content = [*content, {"type": "text", "text": block}]
            else:
                content = content + "\n\n" + block if content else block
            out[0] = {**out[0], "content": content}
        else:
            out.insert(0, {"role": "system", "content": block})
        return out
    for i, message in enumerate(out):
        if message.get("role") == "user":
            content = message.get("content") or ""
            if isinstance(content, list):
                content = [{"type": "text", "text": block}, *content]
            else:
                content = block + "\n\n" + content if content else block
            out[i] = {**message, "content": content}
            return out
    out.insert(0, {"role": "user", "content": block})
    return out


def fold_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The leading system message's text moved into the first user message (a new list).

    For templates that raise on a system message.  The user message's content becomes
    ``system + "\\n\\n" + content`` (``content`` alone when the system text is empty, the
    system text alone when ``content`` is empty; a content list gets the system text and
    ``"\\n\\n"`` as a first text part).  When the message after the system message is not
    a user message, the system message becomes a user message of its own.
    """
    system, rest = messages[0], messages[1:]
    text = system.get("content") or ""
    if isinstance(text, list):
        text = _text_parts(text, "messages[0].content")
    if not text:
        return list(rest)
    if not rest or rest[0].get("role") != "user":
        return [{"role": "user", "content": text}, *rest]
    first = rest[0]
    content = first.get("content") or ""
    if isinstance(content, list):
        content = [{"type": "text", "text": text + "\n\n"}, *content] if content else text
    else:
        content = text + "\n\n" + content if content else text
    return [{**first, "content": content}, *rest[1:]]


def render_jinja(
    compiled: CompiledTemplate,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    add_generation_prompt: bool,
    special: Mapping[str, Any],
    kwargs: Mapping[str, Any],
    time_budget: float,
    documents: list[dict[str, Any]] | None = None,
) -> str:
    """Render prepared messages the way ``apply_chat_template(tokenize=False)`` does."""
    try:
        extra = plain(dict(kwargs), "the template's extra variables")
    except RecursionError:
        raise MessageError(_too_deep("the template's extra variables")) from None
    context: dict[str, Any] = {**special, **extra}
    context.update(messages=messages, tools=tools, documents=documents, add_generation_prompt=add_generation_prompt)
    return render_template(compiled, context, time_budget=time_budget)


UNSET: Any = object()
"""A fingerprint not computed yet: the callee computes it (``None`` is a result: no cache)."""


def fingerprint_of(value: Any, known: Any = UNSET) -> bytes | None:
    """*known* when a caller already computed :func:`exact_fingerprint` of *value* in this call, else that."""
    return exact_fingerprint(value) if known is UNSET else known


def exact_fingerprint(value: Any) -> bytes | None:
    """Bytes that change whenever ``value``'s JSON text could, or None (use no cache then).

    The fast paths remember a tools list by identity and confirm with this that it was not
    changed in place. ``==`` is not enough: ``1 == True == 1.0``, ``0.0 == -0.0`` and dicts in
    another key order are equal but print differently. ``marshal`` (format 2, which has no
    back-references, so only the values count) writes each builtin's type, and dicts in their
    order, in C; it refuses subclasses of the builtins, whose text is not ours to predict.
    """
    try:
        return marshal.dumps(value, 2)
    except (ValueError, TypeError):
        return None
