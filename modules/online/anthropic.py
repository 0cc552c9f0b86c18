"""Anthropic's Messages API, natively: ``POST {base_url}/v1/messages``.

- **Request**: the prompter's ``format="anthropic"`` body (top-level ``system``,
  ``messages`` of ``user``/``assistant`` blocks, ``tools`` with
  ``input_schema``) plus ``model`` and ``max_tokens``, which the API requires:
  :data:`DEFAULT_MAX_TOKENS` unless the call gives ``max_tokens`` (or ``max_completion_tokens``; both,
  disagreeing: refused); with a ``thinking`` budget of at least that, the budget plus
  :data:`DEFAULT_MAX_TOKENS` (the API wants ``max_tokens`` above the budget). ``stop`` becomes
  ``stop_sequences`` (one of only whitespace is refused, as the API refuses it); OpenAI's ``tool_choice``
  and ``parallel_tool_calls=False`` become Anthropic's ``tool_choice`` object; ``temperature`` (at most
  1), ``top_p``, ``top_k`` and Anthropic's own fields (``thinking``, ``metadata``...) pass through as given.
  ``n``, ``seed``, ``presence_penalty``, ``frequency_penalty`` and OpenAI's other
  fields (``response_format``, ``user``, ``logprobs``...; ``metadata`` and
  ``service_tier`` are Anthropic's too) have no equivalent and raise
  :class:`~modules.errors.ModuleConfigError` naming what to pass instead.
- **Headers**: ``x-api-key`` and ``anthropic-version: 2023-06-01``.
- **Answer**: ``text`` blocks are joined; ``tool_use`` blocks become OpenAI
  tool calls (``input`` re-encoded as the ``arguments`` string); ``stop_reason``
  is mapped to OpenAI's finish reasons (``end_turn``/``stop_sequence``/``pause_turn``
  -> ``stop``, ``max_tokens``/``model_context_window_exceeded`` -> ``length``,
  ``tool_use`` -> ``tool_calls``, ``refusal`` -> ``content_filter``; any other ->
  ``stop``, the raw answer keeping Anthropic's); usage gets OpenAI's keys beside Anthropic's
  (``prompt_tokens`` counts the whole prompt, as OpenAI's does: ``input_tokens`` plus the
  prompt-cache counts ``cache_creation_input_tokens`` and ``cache_read_input_tokens``).
- **Stream** (SSE): ``message_start``, ``content_block_start``,
  ``content_block_delta`` (``text_delta`` handed on at once, ``input_json_delta``
  assembled per block), ``content_block_stop``, ``message_delta`` (stop reason,
  output tokens), ``message_stop`` (the end), ``ping`` (ignored), ``error``
  (:class:`~modules.errors.StreamError`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modules.base import Completion, StreamDelta, ToolCall
from modules.errors import APIResponseValidationError, ModuleConfigError, StreamError
from modules.online.dialects import (
    OPENAI_ONLY,
    Collected,
    Decoder,
    NativeFormat,
    Request,
    always,
    arguments_of,
    named_function,
    openai_usage,
    refuse_options,
    same_value,
    sse_decoder,
    tool_call,
)
from modules.online.shape import NOT_JSON, invalid, loads, optional_str, read_object, shown
from modules.online.sse import ServerSentEvent, joined

__all__ = ["ANTHROPIC", "ANTHROPIC_VERSION", "DEFAULT_MAX_TOKENS", "AnthropicDialect"]

#: The ``anthropic-version`` header sent with every request.
ANTHROPIC_VERSION = "2023-06-01"
#: ``max_tokens`` when a call gives none (the API refuses a request without it).
DEFAULT_MAX_TOKENS = 4096

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",  # a long turn paused by the API: resend the answer to continue it (raw keeps the reason)
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
_UNSUPPORTED = {
    **{name: why for name, why in OPENAI_ONLY.items() if name not in ("metadata", "service_tier")},  # its own
    "user": "pass metadata={'user_id': ...}",
    "response_format": "it has no JSON mode (ask for JSON in the prompt, or give a tool and tool_choice)",
    "reasoning_effort": "pass thinking={'type': 'enabled', 'budget_tokens': ...}",
    "n": "it returns one message per request",
    "seed": "it has no seed",
    "presence_penalty": "it has no penalties",
    "frequency_penalty": "it has no penalties",
}
_WHERE = "an Anthropic stream event"
_LIMITS = {"max_tokens": "max_tokens", "max_completion_tokens": "max_tokens"}  # either names the answer's length


def finish_reason(stop_reason: str | None) -> str | None:
    """OpenAI's name for Anthropic's ``stop_reason`` (one it does not document yet: ``stop``; the response's
    ``raw`` keeps the provider's own)."""
    return None if stop_reason is None else _FINISH.get(stop_reason, "stop")


_CACHE_COUNTS = ("cache_creation_input_tokens", "cache_read_input_tokens")


def prompt_tokens(usage: Mapping[str, Any]) -> int | None:
    """OpenAI's ``prompt_tokens`` (every token of the prompt, cached ones included) from Anthropic's usage,
    whose ``input_tokens`` counts only the tokens after the last cache breakpoint: the sum of ``input_tokens``
    and the tokens written to and read from the cache."""
    given = usage.get("input_tokens")
    if type(given) is not int:
        return None
    cached = [usage.get(name) for name in _CACHE_COUNTS]
    return given + sum(count for count in cached if type(count) is int)


def _usage(value: Any, where: str = "the answer") -> dict[str, Any] | None:
    if value is None:
        return None
    usage = read_object(value, "usage", where)
    return openai_usage(prompt_tokens(usage), usage.get("output_tokens"), usage)


_CHOICES = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}


def _tool_choice(choice: Any, parallel: Any) -> dict[str, Any] | None:
    """Anthropic's ``tool_choice`` for OpenAI's (``"auto"``, ``"required"``, ``"none"``, a named function;
    Anthropic's own form as given) and ``parallel_tool_calls=False`` (``disable_parallel_tool_use``)."""
    if choice is None:
        found: dict[str, Any] | None = None
    elif isinstance(choice, str) and choice in _CHOICES:
        found = dict(_CHOICES[choice])
    elif isinstance(choice, Mapping) and choice.get("type") in ("auto", "any", "tool", "none"):
        found = dict(choice)  # already Anthropic's
    elif (name := named_function(choice)) is not None:
        found = {"type": "tool", "name": name}
    else:
        raise ModuleConfigError(
            f"tool_choice: expected 'auto', 'required', 'none' or {{'type': 'function', 'function': {{'name': ...}}}} "
            f"(or Anthropic's own {{'type': 'auto' | 'any' | 'tool' | 'none'}}), got {choice!r}"
        )
    if parallel is False:
        if found is not None and found["type"] == "none":
            return found
        found = {**(found or {"type": "auto"}), "disable_parallel_tool_use": True}
    elif parallel not in (None, True):
        raise ModuleConfigError(f"parallel_tool_calls: expected True or False, got {parallel!r}")
    return found


def _default_limit(options: Mapping[str, Any]) -> int:
    """``max_tokens`` when the call gives none: :data:`DEFAULT_MAX_TOKENS`, plus the thinking budget when
    extended thinking is on with a budget that large (the API requires ``max_tokens`` above the budget)."""
    thinking = options.get("thinking")
    budget = thinking.get("budget_tokens") if isinstance(thinking, Mapping) else None
    if type(budget) is int and budget >= DEFAULT_MAX_TOKENS:
        return budget + DEFAULT_MAX_TOKENS
    return DEFAULT_MAX_TOKENS


class AnthropicDialect:
    format: NativeFormat = "anthropic"

    def request(self, base_url: str, model: str, prompt: Mapping[str, Any], options: dict[str, Any]) -> Request:
        refuse_options(options, _UNSUPPORTED, "Anthropic")
        options = dict(options)
        options.pop("n", None)  # n=1 (anything else was refused above)
        limit: Any = None
        for name in _LIMITS:
            if name in options:
                limit = same_value(options, name, {} if limit is None else {"max_tokens": limit}, "max_tokens", _LIMITS)
        stop = options.pop("stop", None)
        temperature = options.get("temperature")
        if isinstance(temperature, (int, float)) and not isinstance(temperature, bool) and temperature > 1:
            raise ModuleConfigError(f"temperature: Anthropic takes 0 to 1, got {temperature!r}")
        choice = _tool_choice(options.pop("tool_choice", None), options.pop("parallel_tool_calls", None))
        body: dict[str, Any] = {"model": options.pop("model", model), "max_tokens": limit or _default_limit(options)}
        body.update(prompt)
        if stop is not None:  # the API answers a stop sequence of only whitespace with a 400
            body["stop_sequences"] = stops = [stop] if isinstance(stop, str) else list(stop)
            if any(isinstance(given, str) and not given.strip() for given in stops):
                raise ModuleConfigError(
                    f"stop: Anthropic refuses a stop sequence of only whitespace, got {stop!r}; give one with a "
                    "visible character (e.g. 'END'), or limit the answer with max_tokens"
                )
        if choice is not None:
            body["tool_choice"] = choice
        body.update(options)
        return Request(url=base_url + "/v1/messages", body=body)

    def streamed(self, url: str, body: Mapping[str, Any]) -> Request:
        return Request(url=url, body={**body, "stream": True})

    def headers(self) -> dict[str, str]:
        return {"anthropic-version": ANTHROPIC_VERSION}

    def auth(self, key: str) -> dict[str, str]:
        return {"x-api-key": key}

    def completion(self, data: Any) -> Completion:
        body = read_object(data, "the top level")
        content = body.get("content")
        if not isinstance(content, list):
            raise invalid("content", "an array of content blocks", content)
        texts: list[str] = []
        calls: list[ToolCall] = []
        thinking: list[dict[str, Any]] = []  # sent back with the turn (a tool-use turn needs them)
        for i, block in enumerate(content):
            here = f"content[{i}]"
            block = read_object(block, here)
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                if not isinstance(text, str):
                    raise invalid(f"{here}.text", "a string", text)
                texts.append(text)
            elif kind == "tool_use":
                calls.append(_tool_use(block, here))
            elif kind in ("thinking", "redacted_thinking"):
                thinking.append(_thinking(block, here))
            # other blocks (server tools' results) carry no answer text
        return Completion(
            text="".join(texts),
            tool_calls=tuple(calls),
            finish_reason=finish_reason(optional_str(body, "stop_reason", "the top level")),
            usage=_usage(body.get("usage")),
            raw=data,
            thinking_blocks=tuple(thinking),
        )

    def is_auth_failure(self, status: int, body: Any) -> bool:
        return status == 401

    def stream_state(
        self, scrub: Callable[[Any], Any], may_hide: Callable[[str], bool] | None = None, request_body: Any = None
    ) -> AnthropicStreamState:
        return AnthropicStreamState(scrub=scrub, may_hide=may_hide or always)

    def decoder(self, max_line: int) -> Decoder:
        return sse_decoder(max_line)


def _tool_use(block: Mapping[str, Any], here: str, where: str = "the answer") -> ToolCall:
    name = block.get("name")
    if not isinstance(name, str) or not name:
        raise invalid(f"{here}.name", "a non-empty string", name, where)
    ident = optional_str(block, "id", here, where) or ""
    arguments = block.get("input")
    if arguments is not None and not isinstance(arguments, dict):
        raise invalid(f"{here}.input", "an object", arguments, where)
    return tool_call(ident, name, arguments_of(arguments))


def _thinking(block: Mapping[str, Any], where: str, stream: bool = False) -> dict[str, Any]:
    """A thinking block as the API gave it (``thinking`` + ``signature``, or ``redacted_thinking``'s ``data``)."""
    fields = ("thinking", "signature") if block.get("type") == "thinking" else ("data",)
    kept: dict[str, Any] = {"type": block.get("type")}
    for name in fields:
        if name not in block and not stream:
            continue  # kept as the API gave it: sending it back is the API's to judge
        value = block.get(name, "")  # a streamed block starts empty and grows by deltas
        if not isinstance(value, str):
            raise invalid(f"{where}.{name}", "a string", value, _WHERE if stream else "the answer")
        kept[name] = value
    return kept


@dataclass
class _Block:
    kind: str
    id: str = ""
    name: str = ""
    start_input: Any = None
    json: list[str] = field(default_factory=list)
    thinking: dict[str, Any] | None = None  # a thinking block as it started
    deltas: dict[str, list[str]] = field(default_factory=dict)  # its thinking/signature deltas, joined when read


@dataclass
class AnthropicStreamState(Collected):
    """Folds Anthropic's stream events into deltas; tool calls are handed on whole, at the stop reason."""

    message_id: str | None = None
    _blocks: dict[int, _Block] = field(default_factory=dict)
    _emitted: bool = False

    @property
    def complete(self) -> bool:
        return self.done or self.finish_reason is not None

    def on_event(self, event: ServerSentEvent) -> StreamDelta | None:
        data = loads(event.data)
        if data is NOT_JSON:  # raised outside the handler: no __context__ holding the event
            raise APIResponseValidationError(f"stream event is not JSON: {self.scrub(event.data)[:200]!r}")
        data = read_object(self.masked(event.data, data), "the top level", _WHERE)
        kind = data.get("type", event.event)
        if kind == "error" or event.event == "error":
            error = data.get("error", data)
            message = error.get("message", error) if isinstance(error, dict) else error
            raise StreamError(
                f"the server reported an error mid-stream: {shown(message, 500)}", body=data, partial_text=self.text
            )
        if kind == "message_start":
            message = read_object(data.get("message"), "message", _WHERE)
            self.model = optional_str(message, "model", "message", _WHERE)
            self.message_id = optional_str(message, "id", "message", _WHERE)
            self.usage = _usage(message.get("usage"), _WHERE)
        elif kind == "content_block_start":
            index = _index(data)
            block = read_object(data.get("content_block"), "content_block", _WHERE)
            start = _Block(kind=str(block.get("type")))
            if start.kind == "tool_use":
                start.id = optional_str(block, "id", "content_block", _WHERE) or ""
                start.name = optional_str(block, "name", "content_block", _WHERE) or ""
                start.start_input = block.get("input")
            elif start.kind in ("thinking", "redacted_thinking"):
                start.thinking = _thinking(block, "content_block", stream=True)
            self._blocks[index] = start
            text = block.get("text") if start.kind == "text" else None
            if isinstance(text, str) and text:
                self.add_text(text)
                return StreamDelta(text=text)
        elif kind == "content_block_delta":
            return self._delta(data)
        elif kind == "message_delta":
            delta = read_object(data.get("delta") or {}, "delta", _WHERE)
            stop = finish_reason(optional_str(delta, "stop_reason", "delta", _WHERE))
            usage = data.get("usage")
            if usage is not None:
                given = read_object(usage, "usage", _WHERE)
                # output_tokens here is the whole answer's count so far (cumulative); the totals of
                # message_start are recomputed, not kept (their output count was the first token's)
                before = {k: v for k, v in (self.usage or {}).items() if k != "total_tokens"}
                merged = {**before, **given}  # counts message_delta repeats (input, cache) are its own
                prompt = prompt_tokens(merged) if "input_tokens" in given else before.get("prompt_tokens")
                self.usage = openai_usage(prompt, given.get("output_tokens"), merged)
            if stop is not None:
                self.finish_reason = stop
                return self._final()
        elif kind == "message_stop":
            self.done = True
            return self._final()
        # ping, content_block_stop and unknown events (new ones are announced as additive): nothing to hand on
        return None

    def _delta(self, data: Mapping[str, Any]) -> StreamDelta | None:
        index = _index(data)
        delta = read_object(data.get("delta"), "delta", _WHERE)
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            if not isinstance(text, str):
                raise invalid("delta.text", "a string", text, _WHERE)
            self.add_text(text)
            return StreamDelta(text=text) if text else None
        if kind == "input_json_delta":
            piece = delta.get("partial_json")
            if not isinstance(piece, str):
                raise invalid("delta.partial_json", "a string", piece, _WHERE)
            block = self._blocks.get(index)
            if block is None:
                raise invalid(f"content block {index}", "a tool_use block started before its input", None, _WHERE)
            if block.kind == "tool_use":  # a server tool's input (server_tool_use...) is no call for the caller
                block.json.append(piece)
        if kind in ("thinking_delta", "signature_delta"):
            name = "thinking" if kind == "thinking_delta" else "signature"
            piece = delta.get(name)
            block = self._blocks.get(index)
            if not isinstance(piece, str):
                raise invalid(f"delta.{name}", "a string", piece, _WHERE)
            if block is None or block.thinking is None or block.kind != "thinking":
                raise invalid(f"content block {index}", "a thinking block started before its deltas", None, _WHERE)
            block.deltas.setdefault(name, []).append(piece)
        return None  # thinking and signature deltas carry no answer text

    @property
    def thinking_blocks(self) -> tuple[dict[str, Any], ...]:
        """The answer's thinking blocks, whole, in order (a tool-use turn sends them back), masked as a whole:
        a secret split across two deltas is whole only here."""
        return tuple(
            {name: self.scrub(value + joined(b.deltas.get(name, []))) for name, value in b.thinking.items()}
            for _, b in sorted(self._blocks.items())
            if b.thinking is not None
        )

    def _final(self) -> StreamDelta | None:
        if self._emitted:
            return None
        self._emitted = True
        for index, block in sorted(self._blocks.items()):
            if block.kind != "tool_use":
                continue
            if not block.name:
                raise invalid(f"content block {index}: name", "a non-empty string", block.name, _WHERE)
            # masked once whole: a secret split across two input_json_delta events is whole only here
            arguments = self.scrub(joined(block.json)) or arguments_of(block.start_input)
            self.calls.append(tool_call(block.id, block.name, arguments))
        return StreamDelta(tool_calls=tuple(self.calls), finish_reason=self.finish_reason)


def _index(data: Mapping[str, Any]) -> int:
    index = data.get("index")
    if type(index) is not int:
        raise invalid("index", "an integer", index, _WHERE)
    return index


ANTHROPIC = AnthropicDialect()
