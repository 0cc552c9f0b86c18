"""Ollama's native chat API: ``POST {base_url}/api/chat``, streamed as newline-delimited JSON.

- **Request**: the prompter's ``format="ollama"`` body (``messages`` with
  ``images`` as base64 beside the text, ``tools``) plus ``model``, ``stream``
  (always sent: Ollama streams unless told ``false``) and ``options`` from the
  call's options: ``max_tokens`` -> ``num_predict``, ``stop``, ``temperature``,
  ``top_p``, ``top_k``, ``seed``, ``presence_penalty``, ``frequency_penalty``
  (an ``options`` mapping given by the caller is merged in). ``format``,
  ``keep_alive``, ``think`` and other options go to the top level as given.
  ``n`` and OpenAI's fields Ollama has none of (``response_format``, ``user``...:
  Ollama would drop them unread) raise :class:`~modules.errors.ModuleConfigError`;
  so do ``tool_choice`` and ``parallel_tool_calls`` but for ``"auto"`` and ``True``,
  what Ollama does by itself (those are not sent).
- **Headers**: no key needed; one given (Ollama's cloud) goes in
  ``Authorization: Bearer``.
- **Answer**: ``message.content``; ``message.tool_calls`` (arguments as an
  object) become OpenAI tool calls, with fresh ``call_...`` ids when Ollama
  gives none; ``done_reason`` is the finish reason (``tool_calls`` when tools
  were called; Ollama's ``load``/``unload`` -> ``stop``, the raw answer keeping
  them); ``prompt_eval_count``/``eval_count`` become usage.
- **Stream**: one JSON object a line; text pieces in ``message.content``, the
  last object has ``done: true``; ``{"error": ...}`` is a
  :class:`~modules.errors.StreamError`.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from modules.base import Completion, StreamDelta, ToolCall
from modules.errors import APIResponseValidationError, ModuleConfigError, StreamError
from modules.online.dialects import (
    OPENAI_ONLY,
    Collected,
    NativeFormat,
    Request,
    always,
    arguments_of,
    nested_options,
    new_call_id,
    openai_usage,
    refuse_options,
    tool_call,
)
from modules.online.shape import NOT_JSON, invalid, loads, optional_str, read_object, shown, text_of
from modules.online.sse import ServerSentEvent

__all__ = ["OLLAMA", "NDJSONDecoder", "OllamaDialect"]

#: The common options kept in Ollama's nested ``options`` object, by their Ollama names (chat and generate).
OPTION_NAMES = {
    "max_tokens": "num_predict",
    "max_completion_tokens": "num_predict",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}
#: What Ollama refuses (chat and generate): ``n``, and OpenAI's fields it has none of (it takes ``logprobs``
#: and ``top_logprobs`` as OpenAI does); Ollama would drop them unread.
UNSUPPORTED = {
    **{name: why for name, why in OPENAI_ONLY.items() if name not in ("logprobs", "top_logprobs")},
    "response_format": "pass format='json' or format=<a JSON schema>",
    "reasoning_effort": "pass think=True (or think='low' | 'medium' | 'high')",
    "n": "it returns one message per request",
}
_WHERE = "an Ollama stream line"


class NDJSONDecoder:
    """Incremental newline-delimited JSON framing: :meth:`feed` bytes, get one event per complete line.

    Linear like the SSE decoder: an unfinished line is kept as pieces and joined
    once. Blank lines are skipped, and a byte order mark before the first line.
    The last line may end without its newline (JSON Lines allows it): :meth:`flush`
    hands it on when it is a whole JSON value. ``max_line`` bounds a line, in characters.
    """

    def __init__(self, max_line: int | None = None) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending: list[str] = []
        self._size = 0
        self._first = True
        self.max_line = max_line

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        text = self._utf8.decode(chunk)
        if self._first and text:
            self._first = False
            text = text.removeprefix("\ufeff")
        events: list[ServerSentEvent] = []
        start = 0
        while True:
            end = text.find("\n", start)
            if end < 0:
                break
            self._pending.append(text[start:end])
            line = "".join(self._pending).strip()
            self._pending, self._size = [], 0
            if line:
                events.append(ServerSentEvent(data=line))
            start = end + 1
        rest = text[start:]
        if rest:
            self._size += len(rest)
            if self.max_line is not None and self._size > self.max_line:
                raise APIResponseValidationError(f"a stream line is longer than {self.max_line} characters")
            self._pending.append(rest)
        return events

    def flush(self) -> list[ServerSentEvent]:
        """At the end of the bytes: the last line when it came without its newline but is whole JSON
        (a line cut short stays, for :meth:`close` to report)."""
        line = "".join(self._pending).strip()
        if not line or loads(line) is NOT_JSON:
            return []
        self._pending, self._size = [], 0
        return [ServerSentEvent(data=line)]

    def close(self) -> bool:
        """Whether unfinished bytes were left (an unterminated last line is discarded)."""
        left = bool("".join(self._pending).strip())
        self._pending, self._size = [], 0
        return left


def usage_of(body: Mapping[str, Any]) -> dict[str, Any] | None:
    counts = {k: body[k] for k in ("prompt_eval_count", "eval_count") if k in body}
    if not counts:
        return None
    return openai_usage(counts.get("prompt_eval_count"), counts.get("eval_count"), counts)


def _calls(message: Mapping[str, Any], where: str) -> list[ToolCall]:
    raw = message.get("tool_calls")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise invalid("message.tool_calls", "an array or null", raw, where)
    calls = []
    for i, call in enumerate(raw):
        here = f"message.tool_calls[{i}]"
        call = read_object(call, here, where)
        function = read_object(call.get("function"), f"{here}.function", where)
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise invalid(f"{here}.function.name", "a non-empty string", name, where)
        arguments = function.get("arguments")
        if isinstance(arguments, str):  # already encoded: keep it
            encoded = arguments
        elif arguments is None or isinstance(arguments, dict):
            encoded = arguments_of(arguments)
        else:
            raise invalid(f"{here}.function.arguments", "an object", arguments, where)
        calls.append(tool_call(optional_str(call, "id", here, where) or new_call_id(), name, encoded))
    return calls


def finish_reason(done_reason: str | None, called: bool) -> str | None:
    """OpenAI's name for Ollama's ``done_reason``: ``length`` as is, ``stop`` (``tool_calls`` when tools were
    called); any other (``load``, ``unload``...) ``stop``, the raw answer keeping Ollama's."""
    if done_reason == "length":
        return "length"
    if called and done_reason in (None, "stop"):
        return "tool_calls"
    return None if done_reason is None else "stop"


def _tool_settings(options: dict[str, Any]) -> None:
    """Drop ``tool_choice="auto"`` and ``parallel_tool_calls=True``, what Ollama does by itself; refuse any
    other value: ``/api/chat`` has neither field and would drop it unread (``"none"`` would still call tools)."""
    choice = options.pop("tool_choice", "auto")
    if choice != "auto":
        raise ModuleConfigError(
            f"generation option 'tool_choice' is not supported by Ollama: it has no tool_choice and always "
            f"decides itself (got {choice!r}); leave tools out for no tool call, or leave tool_choice out"
        )
    parallel = options.pop("parallel_tool_calls", True)
    if parallel is not True:
        raise ModuleConfigError(
            f"generation option 'parallel_tool_calls' is not supported by Ollama: it has no such setting "
            f"(got {parallel!r}); leave it out"
        )


class OllamaDialect:
    format: NativeFormat = "ollama"

    def request(self, base_url: str, model: str, prompt: Mapping[str, Any], options: dict[str, Any]) -> Request:
        refuse_options(options, UNSUPPORTED, "Ollama")
        options = dict(options)
        options.pop("n", None)  # n=1 (anything else was refused above)
        _tool_settings(options)
        native = nested_options(options, OPTION_NAMES, "stop", "options")
        body: dict[str, Any] = {"model": options.pop("model", model), **prompt, "stream": False, **options}
        if native:
            body["options"] = native
        return Request(url=base_url + "/api/chat", body=body)

    def streamed(self, url: str, body: Mapping[str, Any]) -> Request:
        return Request(url=url, body={**body, "stream": True})

    def headers(self) -> dict[str, str]:
        return {}

    def auth(self, key: str) -> dict[str, str]:
        return {"Authorization": "Bearer " + key}

    def completion(self, data: Any) -> Completion:
        body = read_object(data, "the top level")
        message = read_object(body.get("message"), "message")
        calls = _calls(message, "the answer")
        return Completion(
            text=text_of(message.get("content"), "message.content"),
            tool_calls=tuple(calls),
            finish_reason=finish_reason(optional_str(body, "done_reason", "the top level"), bool(calls)),
            usage=usage_of(body),
            raw=data,
        )

    def is_auth_failure(self, status: int, body: Any) -> bool:
        return status == 401

    def stream_state(
        self,
        scrub: Callable[[Any], Any],
        may_hide: Callable[[str], bool] | None = None,
        request_body: Mapping[str, Any] | None = None,
    ) -> OllamaStreamState:
        return OllamaStreamState(scrub=scrub, may_hide=may_hide or always)

    def decoder(self, max_line: int) -> NDJSONDecoder:
        return NDJSONDecoder(max_line=max_line)


@dataclass
class OllamaStreamState(Collected):
    """Folds the NDJSON lines of ``/api/chat`` into deltas; tool calls are handed on at ``done``."""


    @property
    def complete(self) -> bool:
        return self.done

    def on_event(self, event: ServerSentEvent) -> StreamDelta | None:
        data = loads(event.data)
        if data is NOT_JSON:  # raised outside the handler: no __context__ holding the line
            raise APIResponseValidationError(f"stream line is not JSON: {self.scrub(event.data)[:200]!r}")
        body = read_object(self.masked(event.data, data), "the top level", _WHERE)
        if body.get("error"):
            raise StreamError(
                f"the server reported an error mid-stream: {shown(body['error'], 500)}",
                body=body,
                partial_text=self.text,
            )
        if self.done:
            return None
        self.model = optional_str(body, "model", "the top level", _WHERE) or self.model
        message = body.get("message")
        text = ""
        if message is not None:
            message = read_object(message, "message", _WHERE)
            text = text_of(message.get("content"), "message.content", _WHERE)
            self.calls += _calls(message, _WHERE)
        self.add_text(text)
        done = body.get("done")
        if done is not None and not isinstance(done, bool):
            raise invalid("done", "a boolean", done, _WHERE)
        if not done:
            return StreamDelta(text=text) if text else None
        self.done = True
        self.usage = usage_of(body)
        reason = optional_str(body, "done_reason", "the top level", _WHERE)
        self.finish_reason = finish_reason(reason, bool(self.calls)) or "stop"
        return StreamDelta(text=text, tool_calls=tuple(self.calls), finish_reason=self.finish_reason)


OLLAMA = OllamaDialect()
