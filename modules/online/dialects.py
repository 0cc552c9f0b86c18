"""The seam between :class:`~modules.online.module.OnlineChatModule` and a provider's native wire protocol.

The module owns everything that is the same for every provider (retries, the
total deadline, the size cap, secrets, typed errors). A :class:`Dialect` owns
what differs, all of it pure: the URL, the auth header, the request body built
from the prompter's rendered body, the answer's parsing into a
:class:`~modules.base.Completion`, and the stream's framing and events.

The OpenAI-compatible sources have no dialect object: the module's own code is
theirs. :func:`modules.online.native.dialect_for` returns None for them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeGuard

from modules.base import Completion, StreamDelta, ToolCall
from modules.errors import ModuleConfigError
from modules.online.sse import ServerSentEvent, SSEDecoder, joined

__all__ = [
    "OPENAI_ONLY",
    "nested_options",
    "Decoder",
    "Dialect",
    "NativeFormat",
    "Request",
    "StreamState",
    "named_function",
    "new_call_id",
    "openai_usage",
    "refuse_options",
    "same_value",
]

#: The prompter formats a native dialect sends.
NativeFormat = Literal["anthropic", "gemini", "ollama", "ollama_generate"]


class StreamState(Protocol):
    """Folds a stream's events into deltas (see ``ChatStreamState`` for the OpenAI one)."""

    done: bool

    @property
    def text(self) -> str: ...

    @property
    def complete(self) -> bool: ...

    def on_event(self, event: ServerSentEvent) -> StreamDelta | None: ...


class Decoder(Protocol):
    def feed(self, chunk: bytes) -> list[ServerSentEvent]: ...

    def flush(self) -> list[ServerSentEvent]:
        """The events the end of the bytes completes (NDJSON's last line without its newline)."""
        ...

    def close(self) -> bool: ...


@dataclass(frozen=True)
class Request:
    """What a dialect builds: the URL and the body (the module adds the common headers)."""

    url: str
    body: dict[str, Any]


class Dialect(Protocol):
    """One provider's native protocol. Every method is pure."""

    format: NativeFormat
    """The prompter format whose output is the body's conversation part (``"anthropic"``...)."""

    def request(self, base_url: str, model: str, prompt: Mapping[str, Any], options: dict[str, Any]) -> Request:
        """The non-streamed request: ``prompt`` is the prompter's rendered body, ``options`` the call's options."""
        ...

    def streamed(self, url: str, body: Mapping[str, Any]) -> Request:
        """The same request, asking for a stream."""
        ...

    def headers(self) -> dict[str, str]:
        """Fixed headers the protocol requires (e.g. ``anthropic-version``)."""
        ...

    def auth(self, key: str) -> dict[str, str]:
        """The header(s) that carry the key."""
        ...

    def completion(self, data: Any) -> Completion:
        """The :class:`Completion` in a decoded (and already scrubbed) answer; wrong shapes raise."""
        ...

    def stream_state(
        self,
        scrub: Callable[[Any], Any],
        may_hide: Callable[[str], bool] | None = None,
        request_body: Mapping[str, Any] | None = None,
    ) -> StreamState:
        """A fresh stream state: ``scrub`` masks secrets in a decoded event; ``may_hide(raw)`` False
        says an event's text cannot decode to a secret, so ``scrub`` is skipped (None: always scrub).
        *request_body* is the native body sent (Gemini reads on past the first candidate's finish
        when it asked for several)."""
        ...

    def is_auth_failure(self, status: int, body: Any) -> bool:
        """Whether an error answer means a wrong key, whatever its status (it becomes an AuthenticationError)."""
        ...

    def decoder(self, max_line: int) -> Decoder: ...


def always(raw: str) -> bool:
    """The default ``may_hide``: every event might hide a secret."""
    return True


def sse_decoder(max_line: int) -> Decoder:
    return SSEDecoder(max_line=max_line)


#: The OpenAI request fields a call may pass (``modules.base.OPENAI_OPTIONS``, and the local model's
#: ``max_new_tokens``) that no native protocol translates: a native API answers 400 to a field it does not
#: know (Anthropic, Gemini) or drops it unread (Ollama), so each dialect refuses those it has no field for,
#: before sending, naming what to pass instead (a dialect overrides the reason with its own remedy).
OPENAI_ONLY = {
    "logit_bias": "it has no logit bias",
    "logprobs": "it returns no log probabilities",
    "top_logprobs": "it returns no log probabilities",
    "user": "it has no user field",
    "response_format": "it has no response_format",
    "stream_options": "its streams report usage without being asked (use m.stream(...))",
    "reasoning_effort": "it has no reasoning_effort",
    "service_tier": "it has no service_tier",
    "metadata": "it has no metadata field",
    "store": "it has no store field",
    "modalities": "it has no modalities field",
    "audio": "it has no audio output field",
    "prediction": "it has no predicted outputs",
    "web_search_options": "it has no web_search_options",
    "verbosity": "it has no verbosity",
    "max_new_tokens": "pass max_tokens=... (the module translates it)",
}


def refuse_options(options: Mapping[str, Any], unsupported: Mapping[str, str], provider: str) -> None:
    """Raise a :class:`ModuleConfigError` for an OpenAI option this provider has no equivalent of
    (``n=1``, what every provider does anyway, is accepted; the caller drops it)."""
    for name, why in unsupported.items():
        if name in options and not (name == "n" and options[name] == 1):
            raise ModuleConfigError(f"generation option {name!r} is not supported by {provider}: {why}")


def new_call_id() -> str:
    """An id for a tool call whose provider gives none: the prompter finds the function by it."""
    return "call_" + uuid.uuid4().hex[:24]


def openai_usage(prompt: Any, completion: Any, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Usage in OpenAI's keys (``prompt_tokens``, ``completion_tokens``, ``total_tokens``) plus the provider's own."""
    usage: dict[str, Any] = dict(raw)
    if isinstance(prompt, int) and not isinstance(prompt, bool):
        usage["prompt_tokens"] = prompt
    if isinstance(completion, int) and not isinstance(completion, bool):
        usage["completion_tokens"] = completion
    given, made = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if _count(given) and _count(made):  # a server's own keys of these names may hold anything
        usage.setdefault("total_tokens", given + made)
    return usage


def _count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def arguments_of(value: Any) -> str:
    """Tool-call arguments given as an object, as the JSON string OpenAI's shape carries."""
    return json.dumps({} if value is None else value, ensure_ascii=False)


def named_function(choice: Any) -> str | None:
    """The function OpenAI's ``tool_choice`` names (``{"type": "function", "function": {"name": ...}}``), or None."""
    if isinstance(choice, Mapping) and choice.get("type") == "function":
        function = choice.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return function["name"]  # type: ignore[no-any-return]
    return None


def tool_call(ident: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=ident, type="function", function={"name": name, "arguments": arguments})


@dataclass
class Collected:
    """What a stream state has seen so far (shared by the native states), and how it masks events."""

    done: bool = False
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    model: str | None = None
    calls: list[ToolCall] = field(default_factory=list)
    scrub: Callable[[Any], Any] = field(default=lambda v: v, repr=False)
    may_hide: Callable[[str], bool] = field(default=always, repr=False)
    pieces: list[str] = field(default_factory=list, repr=False)  # the text, joined only when read

    @property
    def text(self) -> str:
        """The text received so far (joined once per read: ``+=`` on a growing string is quadratic)."""
        return joined(self.pieces)

    def add_text(self, text: str) -> None:
        if text:
            self.pieces.append(text)

    def masked(self, raw: str, data: Any) -> Any:
        """``data`` (decoded from ``raw``) with secrets masked; skipped when ``raw`` cannot hide one."""
        return self.scrub(data) if self.may_hide(raw) else data


def same_value(
    options: dict[str, Any], option: str, taken: Mapping[str, Any], key: str, names: Mapping[str, str]
) -> Any:
    """Pop ``option`` for ``key``; another option already taken for the same key (``max_tokens`` and
    ``max_completion_tokens``) with a different value is a :class:`ModuleConfigError`: neither wins silently."""
    value = options.pop(option)
    if key in taken and taken[key] != value:
        said = " and ".join(repr(o) for o, k in names.items() if k == key)
        raise ModuleConfigError(
            f"generation options {said} disagree ({taken[key]!r} and {value!r}): both set {key}; give one of them"
        )
    return value


def nested_options(options: dict[str, Any], names: Mapping[str, str], stop_key: str, field: str) -> dict[str, Any]:
    """Move the common options a protocol keeps in one nested object (Gemini's ``generationConfig``,
    Ollama's ``options``) out of ``options`` into that object, under the protocol's names; a caller's
    own ``field=`` mapping is merged under them. ``options`` keeps what goes to the top level."""
    nested: dict[str, Any] = {}
    for option, key in names.items():
        if option in options:
            nested[key] = same_value(options, option, nested, key, names)
    stop = options.pop("stop", None)
    if stop is not None:
        nested[stop_key] = [stop] if isinstance(stop, str) else list(stop)
    given = options.pop(field, None)
    if given is not None and not isinstance(given, Mapping):
        raise ModuleConfigError(f"generation option {field!r}: expected a mapping, got {type(given).__name__}")
    return {**given, **nested} if given is not None else nested
