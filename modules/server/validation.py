"""Checks of a parsed request beyond its schema, and the plain values handed to the module.

Options the server cannot honour are refused (never silently ignored); messages
become the dicts a chat template reads; OpenAI's options become the module's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from modules.server.errors import HTTPError
from modules.server.json_body import JSONProblem, lone_surrogate, strict_loads
from modules.server.limits import MAX_STOP_CHARS, MAX_STOP_STRINGS

__all__ = [
    "check_stream_options",
    "describe_invalid",
    "finish_reason",
    "generation_options",
    "message_dict",
    "refuse_unsupported",
    "stop_strings",
]


_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "dict", "list", "none"})


def _is_union_tag(part: Any) -> bool:
    """Whether a pydantic error location part names a union branch (``str``, ``list[ContentPart]``),
    not a field: the schema's field names are lower-case identifiers."""
    return isinstance(part, str) and (part in _TYPE_TAGS or "[" in part or part[:1].isupper())


def _client_location(error: Mapping[str, Any]) -> tuple[str, ...]:
    """*error*'s location in the client's words: union branch names dropped, but an unknown key the
    client sent (the last part of an ``extra_forbidden`` error: ``Include_usage``) kept as sent."""
    loc = tuple(error.get("loc", ()))
    own = len(loc) - 1 if error.get("type") == "extra_forbidden" else len(loc)
    return tuple(str(p) for k, p in enumerate(loc) if (k, p) != (0, "body") and (k == own or not _is_union_tag(p)))


def describe_invalid(errors: Sequence[Mapping[str, Any]]) -> tuple[str, str | None]:
    """The 400's message and ``param`` for pydantic's *errors* on a request body.

    The most specific error wins (``messages.0.content.0.text``, not the union's
    other branch ``messages.0.content``); union branch names never reach the
    client; the branches that fail at one place are named together ("a valid
    string or a valid list").
    """
    located = [(_client_location(e), e) for e in errors]
    if not located:
        return "invalid request body", None
    deepest = max(len(loc) for loc, _ in located)
    where = next(loc for loc, _ in located if len(loc) == deepest)
    said: list[str] = []
    for loc, error in located:
        if loc != where:
            continue
        what = str(error.get("msg") or "invalid value")
        if said and what.startswith("Input should be "):
            what = what[len("Input should be ") :]
        if what not in said:
            said.append(what)
    param = ".".join(where) or None
    message = " or ".join(said)
    return (f"{param}: {message}" if param else message), param


def finish_reason(reason: str | None) -> str:
    return reason if reason in ("stop", "length", "tool_calls", "content_filter") else "stop"


def message_dict(message: Any, index: int = 0) -> dict[str, Any]:
    """A validated message as the plain dict a chat template reads (text parts joined, developer -> system).

    *index* is the message's place in ``messages``, named by the 400s for a
    message without content or a tool call without an id.
    """
    where = f"messages[{index}]"
    out: dict[str, Any] = message.model_dump(exclude_none=True)
    if out["role"] == "developer":  # OpenAI's newer name for system; chat templates know "system"
        out["role"] = "system"
    content = out.get("content")
    if isinstance(content, list):
        kinds = {p.get("type") for p in content}
        if kinds - {"text"}:
            raise HTTPError(
                400,
                f"{where}: content parts of type {sorted(kinds - {'text'})} are not supported by a text model",
                param="messages",
            )
        for j, part in enumerate(content):
            if not isinstance(part.get("text"), str):  # OpenAI's text part: {"type": "text", "text": "..."}
                at = f"{where}.content[{j}].text"
                raise HTTPError(400, f"{at}: a text part needs its text, a string", param=at)
        out["content"] = "".join(p["text"] for p in content)
    if out["role"] == "assistant":
        if content is None and not out.get("tool_calls"):
            raise HTTPError(400, f"{where}: an assistant message needs content or tool_calls", param=where)
        for j, call in enumerate(out.get("tool_calls") or ()):
            if not call.get("id"):
                raise HTTPError(
                    400,
                    f"{where}.tool_calls[{j}]: a tool call needs an id (the tool message's tool_call_id names it)",
                    param=f"{where}.tool_calls[{j}].id",
                )
            arguments = call.get("function", {}).get("arguments")
            if isinstance(arguments, str):
                _check_arguments(arguments, f"{where}.tool_calls[{j}].function.arguments")
    elif content is None:
        raise HTTPError(400, f"{where}: a {message.role} message needs content", param=f"{where}.content")
    return out


def _check_arguments(arguments: str, at: str) -> None:
    """400 (*at*, the field) unless a tool call's ``arguments`` text is strict JSON (parsed further on, by
    the model's template): Python's json would read ``NaN``, ``1e999`` (as Infinity) and a key given twice
    (the last wins), and put what it read into the prompt; a lone surrogate (``"\\ud800"``) is no text a
    tokenizer can take. Blank text is ``{}``, as the module reads it."""
    if not arguments.strip():
        return
    try:
        value = strict_loads(arguments, "text")  # its nesting bounded before it is parsed
    except JSONProblem as exc:
        raise HTTPError(
            400,
            f"{at}: {exc}; the arguments must be strict JSON (RFC 8259: no NaN or Infinity, "
            "numbers a float can hold, each key once in an object)",
            param=at,
        ) from None
    lone = lone_surrogate(arguments, value, root=at)
    if lone is not None:
        raise HTTPError(400, lone[1], param=at)


_TOOL_CHOICES = ("auto", "none")


def _is(*values: Any) -> Callable[[Any], bool]:
    """A check that a value is one of *values* (of the same JSON type: ``0`` is not ``false``)."""
    return lambda v: any(v == x and type(v) is type(x) for x in values)


def _is_zero(v: Any) -> bool:
    return type(v) in (int, float) and v == 0


def _text_format(v: Any) -> bool:
    return isinstance(v, Mapping) and set(v) == {"type"} and v["type"] == "text"


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_mapping(v: Any) -> bool:
    return isinstance(v, Mapping)


# Options read from the body besides the schema's own fields, with the values this server honours
# by doing nothing: the neutral value of a sampling option (presence_penalty 0), "off" for a feature
# (logprobs false), or metadata that never changes the answer (user). Any other option, or any other
# value, is refused by name: an option silently ignored would change the answer's meaning.
_NEUTRAL_BOTH: dict[str, Callable[[Any], bool]] = {
    "presence_penalty": _is_zero,
    "frequency_penalty": _is_zero,
    "logit_bias": lambda v: v == {},
    "user": _is_str,
}
_NEUTRAL_CHAT: dict[str, Callable[[Any], bool]] = {
    **_NEUTRAL_BOTH,
    "logprobs": _is(False),
    "top_logprobs": _is(0),
    "response_format": _text_format,
    "parallel_tool_calls": _is(True),
    "metadata": _is_mapping,
    "store": _is(False),
}
_NEUTRAL_TEXT: dict[str, Callable[[Any], bool]] = {
    **_NEUTRAL_BOTH,
    "echo": _is(False),
    "logprobs": _is(0),
    "best_of": _is(1),
    "suffix": _is(""),
}
_WHAT = {  # how a refusal names a non-neutral value
    "logprobs": "logprobs (token log probabilities)",
    "top_logprobs": "top_logprobs",
    "best_of": "best_of above 1",
    "suffix": "suffix (insertion)",
    "echo": "echo=true",
    "parallel_tool_calls": "parallel_tool_calls=false",
    "store": "store=true",
}


def check_stream_options(body: Any) -> None:
    """400 for ``stream_options`` without ``stream: true``, as OpenAI answers it: nothing it could apply to."""
    if body.stream_options is not None and not body.stream:
        raise HTTPError(400, "stream_options: only allowed with stream=true", param="stream_options")


def refuse_unsupported(body: Any, chat: bool) -> None:
    """400 for options that would change the answer's meaning if this server ignored them.

    Every key of the body is either a field of the schema or an option with a
    neutral value in this module's table; anything else is refused, naming it.
    """
    extra = body.model_extra or {}

    def refuse(param: str, what: str) -> None:
        raise HTTPError(400, f"{what} is not supported by this server", param=param)

    if body.n not in (None, 1):
        refuse("n", f"n={body.n} (one choice per request)")
    check_stream_options(body)
    neutral = _NEUTRAL_CHAT if chat else _NEUTRAL_TEXT
    for key in sorted(extra):
        value = extra[key]
        if value is None:
            continue  # null is "not given" for every OpenAI option
        if key not in neutral:
            refuse(key, f"the option {key[:100]!r}")
        if not neutral[key](value):
            if key == "response_format":
                kind = value.get("type") if isinstance(value, Mapping) else value
                refuse(key, f"response_format {str(kind)[:100]!r} (only 'text')")
            refuse(key, _WHAT.get(key, f"{key}={json.dumps(value)[:100]}"))
    if chat:
        choice = body.tool_choice
        if choice is not None and not isinstance(choice, (str, Mapping)):
            raise HTTPError(
                400,
                f"tool_choice: expected 'auto', 'none' or an object naming a function, got {_json_type(choice)}",
                param="tool_choice",
            )
        if choice is not None and choice not in _TOOL_CHOICES:
            shown = choice if isinstance(choice, str) else "a named function"
            refuse("tool_choice", f"tool_choice {shown[:100]!r} (only 'auto' and 'none')")
        for i, tool in enumerate(body.tools or ()):
            _refuse_strict(tool, i, offered=choice != "none")


def _refuse_strict(tool: Any, index: int, offered: bool) -> None:
    """400 for ``tools[i].function.strict: true``: OpenAI then guarantees the call's arguments match the
    function's ``parameters`` schema (constrained decoding), which this server cannot; ignoring it would
    hand a client unchecked arguments it was promised were checked. ``false`` and ``null`` are the default."""
    strict = (tool.function.model_extra or {}).get("strict")
    param = f"tools[{index}].function.strict"
    if strict is not None and not isinstance(strict, bool):
        raise HTTPError(400, f"{param}: expected a boolean, got {_json_type(strict)}", param=param)
    if strict and offered:
        raise HTTPError(
            400,
            f"{param}=true (arguments guaranteed to match the function's parameters schema) is not supported "
            "by this server: its tool calls are not constrained to the schema; leave strict out or send false, "
            "and validate the arguments yourself",
            param=param,
        )


def _json_type(value: Any) -> str:
    """The JSON name of *value*'s type, as a 400 says it."""
    if isinstance(value, bool):
        return "a boolean"
    return {int: "a number", float: "a number", list: "an array", str: "a string", dict: "an object"}.get(
        type(value), "null"
    )


def generation_options(body: Any, chat: bool) -> dict[str, Any]:
    """The module's generation options for a validated request *body* (400 for ones that contradict)."""
    options: dict[str, Any] = {}
    max_tokens = body.max_tokens
    if chat and body.max_completion_tokens is not None:
        if max_tokens is not None and max_tokens != body.max_completion_tokens:
            raise HTTPError(
                400,
                f"max_tokens={max_tokens} and max_completion_tokens={body.max_completion_tokens} disagree: both "
                "name the answer's length (max_tokens is the older name); send one of them",
                param="max_tokens",
            )
        max_tokens = body.max_completion_tokens
    if max_tokens is not None:
        options["max_new_tokens"] = max_tokens
    elif not chat:
        options["max_new_tokens"] = 16  # OpenAI's default for /v1/completions
    for key in ("temperature", "top_p", "seed"):
        if getattr(body, key) is not None:
            options[key] = getattr(body, key)
    stops = stop_strings(body)
    if stops:
        options["stop"] = stops
    return options


def stop_strings(body: Any) -> list[str]:
    """The request's ``stop`` strings (none when not given); 400 for an empty one, or too many or too long."""
    if body.stop is None:
        return []
    stops = [body.stop] if isinstance(body.stop, str) else list(body.stop)
    if not all(stops):
        raise HTTPError(400, "stop: stop strings must not be empty", param="stop")
    if len(stops) > MAX_STOP_STRINGS:
        raise HTTPError(400, f"stop: at most {MAX_STOP_STRINGS} stop strings, got {len(stops)}", param="stop")
    longest = max((len(x) for x in stops), default=0)
    if longest > MAX_STOP_CHARS:
        raise HTTPError(400, f"stop: a stop string is at most {MAX_STOP_CHARS} characters, got {longest}", param="stop")
    return stops
