"""Checks of a parsed request beyond its schema, and the plain values handed to the module.

Options the server cannot honour are refused (never silently ignored); messages
become the dicts a chat template reads; OpenAI's options become the module's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modules.server.errors import HTTPError

__all__ = ["finish_reason", "generation_options", "message_dict", "refuse_unsupported"]


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
        out["content"] = "".join(p.get("text") or "" for p in content)
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
    elif content is None:
        raise HTTPError(400, f"{where}: a {message.role} message needs content", param=f"{where}.content")
    return out


_TOOL_CHOICES = ("auto", "none")


def refuse_unsupported(body: Any, chat: bool) -> None:
    """400 for options that would change the answer's meaning if this server ignored them."""
    extra = body.model_extra or {}

    def refuse(param: str, what: str) -> None:
        raise HTTPError(400, f"{what} is not supported by this server", param=param)

    if body.n not in (None, 1):
        refuse("n", f"n={body.n} (one choice per request)")
    if chat:
        if extra.get("logprobs") not in (None, False):
            refuse("logprobs", "logprobs=true")
        if extra.get("top_logprobs") not in (None, 0):
            refuse("top_logprobs", "top_logprobs")
        fmt = extra.get("response_format")
        if fmt is not None and not (isinstance(fmt, Mapping) and fmt.get("type") == "text"):
            kind = fmt.get("type") if isinstance(fmt, Mapping) else fmt
            refuse("response_format", f"response_format {kind!r} (only 'text')")
        choice = body.tool_choice
        if choice is not None and choice not in _TOOL_CHOICES:
            shown = choice if isinstance(choice, str) else "a named function"
            refuse("tool_choice", f"tool_choice {shown!r} (only 'auto' and 'none')")
    else:
        if extra.get("echo") not in (None, False):
            refuse("echo", "echo=true")
        if extra.get("logprobs") not in (None, 0):
            refuse("logprobs", "logprobs (token log probabilities)")
        if extra.get("best_of") not in (None, 1):
            refuse("best_of", "best_of above 1")
        if extra.get("suffix") not in (None, ""):
            refuse("suffix", "suffix (insertion)")


def generation_options(body: Any, chat: bool) -> dict[str, Any]:
    options: dict[str, Any] = {}
    max_tokens = (getattr(body, "max_completion_tokens", None) if chat else None) or body.max_tokens
    if max_tokens is not None:
        options["max_new_tokens"] = max_tokens
    elif not chat:
        options["max_new_tokens"] = 16  # OpenAI's default for /v1/completions
    for key in ("temperature", "top_p", "seed"):
        if getattr(body, key) is not None:
            options[key] = getattr(body, key)
    if body.stop is not None:
        stops = [body.stop] if isinstance(body.stop, str) else list(body.stop)
        if not all(stops):
            raise HTTPError(400, "stop: stop strings must not be empty", param="stop")
        if stops:
            options["stop"] = stops
    return options
