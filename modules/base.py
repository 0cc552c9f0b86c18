"""ModuleBase: what every module (online API, local model) has in common.

A module pairs a *prompter* (which builds the conversation) with a *backend*
(which answers it). Users see four methods::

    m = SomeModule(...).prompt("You are terse.")    # attach a prompter, get the module back
    m("Why is the sky blue?")                        # -> "Rayleigh scattering."
    for piece in m.stream("Tell me a story"): ...   # text pieces as they arrive
    m2 = m.share(prompt=other_prompter)              # same backend, another prompter

A call goes through three steps, each a method a subclass can override:

1. ``_build_request(input, history, tools, generation)`` -> a plain value
   (an HTTP request description, a prompt string plus options, ...). Pure: no
   I/O. :meth:`ModuleBase.build_request` exposes it so it can be inspected and
   tested without a network or a model.
2. ``_complete(request)`` -> :class:`Completion`, or
   ``_stream(request)`` -> an iterator of :class:`StreamDelta`.
3. The base class turns the completion into the caller's answer: the text
   (passed through :meth:`ModuleBase._get_response`), or, when the model called
   tools, an :data:`AssistantMessage` ready to append to the history.

A subclass implements ``_build_request`` and ``_complete``; ``_stream`` is
optional (the default yields the whole completion as one piece). Example:

>>> class Echo(ModuleBase[str]):
...     def _build_request(self, input, history, tools, generation):
...         return f"you said: {input}"
...     def _complete(self, request):
...         return Completion(text=request)
>>> Echo()("hi")
'you said: hi'
>>> list(Echo().stream("hi"))
['you said: hi']

Attaching a prompter never changes the prompter: the module keeps a
reference and only calls ``generate_prompt`` / ``get_response`` on it.

Why this file is long: the call contract (prompt, share, call keywords and their
checks) and the value types every module returns (Completion, ToolCall, StreamDelta) are one
interface; splitting them would scatter what a module author must read.
"""

from __future__ import annotations

import copy
import difflib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, NoReturn, TypedDict, TypeVar, cast

from modules.errors import ModuleConfigError

if TYPE_CHECKING:  # pragma: no cover
    from prompter import PrompterBase

__all__ = [
    "GENERATION_OPTIONS",
    "OPENAI_OPTIONS",
    "AssistantMessage",
    "ChatStream",
    "Completion",
    "ModuleBase",
    "ModuleInput",
    "StreamDelta",
    "ToolCall",
    "ToolCallFunction",
]

RequestT = TypeVar("RequestT")
M = TypeVar("M", bound="ModuleBase[Any]")

#: What a module call accepts as its first argument: a str, a dict of slot
#: values, or a message dict / list of message dicts (e.g. a tool result).
ModuleInput = str | Mapping[str, Any] | Sequence[Mapping[str, Any]]

#: Keys a caller may not pass as generation options: they are set by the module.
_RESERVED_OPTIONS = frozenset({"messages", "stream"})

#: The fields of OpenAI's chat-completions request a caller may set per call (the module sets
#: ``messages``, ``tools`` and ``stream``).
OPENAI_OPTIONS = frozenset(
    {
        "model", "temperature", "top_p", "n", "stop", "max_tokens", "max_completion_tokens", "presence_penalty",
        "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "seed", "user", "response_format",
        "tool_choice", "parallel_tool_calls", "stream_options", "reasoning_effort", "service_tier", "metadata",
        "store", "modalities", "audio", "prediction", "web_search_options", "verbosity",
    }
)  # fmt: skip

#: What :attr:`ModuleBase.generation_options` holds unless a module declares its own: OpenAI's fields
#: plus the local model's ``top_k`` and ``max_new_tokens``.
GENERATION_OPTIONS = OPENAI_OPTIONS | {"top_k", "max_new_tokens"}

_UNSET: Any = object()  # share()'s LazyLLM keywords left out

#: LazyLLM's ``share()`` keywords, with what takes their place.
_SHARE_REMEDIES = {
    "format": "an output formatter is not part of a module; read the answer m(input) returns (the "
    "prompter's get_response extracts it) and parse it yourself, e.g. json.loads",
    "stream": "streaming is per call: use m.stream(input) (or m.astream) for pieces; m(input) returns the "
    "whole answer",
    "history": "the conversation is given per call: m(input, history=[...]) (llm_chat_history= is accepted "
    "as LazyLLM's name)",
}

#: LazyLLM's call keywords that prompter names differently, with the remedy.
_LAZYLLM_KEYWORDS = {
    "lazyllm_files": "pass files as content parts of a message dict input, e.g. {'role': 'user', 'content': "
    "[{'type': 'image_url', 'image_url': {'url': ...}}]}",
    "stream_output": "call .stream() instead: it returns the text pieces",
    "chat_history": "pass the conversation as history= (llm_chat_history= is accepted as LazyLLM's name)",
    "files": "pass files as content parts of a message dict input",
}


class ToolCallFunction(TypedDict):
    """The function part of a tool call: its name and its arguments as a JSON string."""

    name: str
    arguments: str


class _ToolCallExtra(TypedDict, total=False):
    extra_content: dict[str, Any]
    """A Gemini call's ``{"google": {"thought_signature": ...}}`` (the convention of Gemini's
    OpenAI-compatible API), which goes back with it through ``history``."""


class ToolCall(_ToolCallExtra):
    """One tool call, in OpenAI shape: ``{"id", "type": "function", "function": {...}}`` (and, from
    Gemini, ``extra_content``)."""

    id: str
    type: Literal["function"]
    function: ToolCallFunction


class _AssistantExtra(TypedDict, total=False):
    thinking_blocks: list[dict[str, Any]]
    """Anthropic's thinking blocks of the answer (extended thinking on), sent back first in the turn."""


class AssistantMessage(_AssistantExtra):
    """The assistant's turn when it calls tools, in OpenAI message shape.

    A module call returns this (instead of a str) when the model called tools.
    It is a plain dict, so it can be appended to ``history`` as is, followed by
    ``{"role": "tool", "tool_call_id": ..., "content": ...}`` results::

        reply = m("What's the weather in Paris?", tools=tools)
        if isinstance(reply, dict):
            call = reply["tool_calls"][0]
            history += [reply, {"role": "tool", "tool_call_id": call["id"], "content": "18°C"}]
    """

    role: Literal["assistant"]
    content: str | None
    tool_calls: list[ToolCall]


@dataclass(frozen=True)
class Completion:
    """What a backend answered, before the base class shapes it for the caller.

    ``text`` is the answer text ("" when the model only called tools),
    ``tool_calls`` the complete tool calls, ``finish_reason`` the backend's
    reason to stop (``"stop"``, ``"length"``, ``"tool_calls"``...), ``usage``
    token counts if the backend reports them, ``raw`` the backend's own
    response object for callers who need more.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: Mapping[str, Any] | None = None
    raw: Any = None
    thinking_blocks: tuple[dict[str, Any], ...] = ()
    """Anthropic's thinking blocks (extended thinking), which a turn that called tools must send back."""


@dataclass(frozen=True)
class StreamDelta:
    """One step of a stream: a piece of text and/or completed tool calls and/or the finish reason.

    Backends emit tool calls only once they are complete (an online module
    accumulates the provider's per-index argument deltas first).
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None


@dataclass
class ChatStream:
    """An iterator of text pieces, returned by :meth:`ModuleBase.stream`.

    Iterate it for the text; once exhausted, ``text`` holds the whole answer,
    ``tool_calls`` any tool calls and ``finish_reason`` why the model stopped.
    ``message`` gives the assistant turn as an :data:`AssistantMessage`-shaped
    dict. Use it as a context manager (or call :meth:`close`) to release the
    connection early when you stop reading before the end::

        with m.stream("Tell me a story") as s:
            for piece in s:
                print(piece, end="")
        print(s.finish_reason)
    """

    _deltas: Iterator[StreamDelta]
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    # the pieces read so far, joined when ``text`` is read: appending to one growing string
    # copies it again for every piece, which is quadratic in a long answer's piece count
    _pieces: list[str] = field(default_factory=list, repr=False)
    # close() from another thread while a read runs (a UI's stop button): the read in flight cannot be
    # closed under it (a running generator refuses), so the stream ends as that read returns
    _state: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _reading: bool = field(default=False, repr=False, compare=False)
    _closing: bool = field(default=False, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The text read so far (the whole answer once the stream is exhausted)."""
        if len(self._pieces) > 1:
            self._pieces[:] = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    @text.setter
    def text(self, value: str) -> None:
        self._pieces[:] = [value] if value else []

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        with self._state:
            if self._closing:
                raise StopIteration
            self._reading = True
        try:
            return self._read()
        except Exception:
            with self._state:
                closed = self._closing
            if closed:  # the read failed because the caller closed the stream under it: the loop just ends
                raise StopIteration from None
            raise
        finally:
            with self._state:
                self._reading = False
                closing = self._closing
            if closing:  # closed by another thread while this read ran: release the connection now
                self._close_deltas()

    def _read(self) -> str:
        while True:
            delta = next(self._deltas)  # StopIteration ends us too
            if delta.tool_calls:
                self.tool_calls.extend(delta.tool_calls)
            if delta.finish_reason is not None:
                self.finish_reason = delta.finish_reason
            if delta.text:
                self._pieces.append(delta.text)
                return delta.text

    @property
    def message(self) -> dict[str, Any]:
        """The assistant turn so far, in OpenAI message shape (``tool_calls`` only when present)."""
        if self.tool_calls:
            return {"role": "assistant", "content": self.text or None, "tool_calls": list(self.tool_calls)}
        return {"role": "assistant", "content": self.text}

    def close(self) -> None:
        """Stop the stream and release its connection (safe to call twice, and from another thread: a read
        running there then returns its piece, the connection is released and the next read ends the loop)."""
        with self._state:
            self._closing = True
            if self._reading:
                return  # the running read closes the stream as it ends
        self._close_deltas()

    def _close_deltas(self) -> None:
        close = getattr(self._deltas, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> ChatStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def as_prompter(prompt: Any) -> PrompterBase:
    """Turn what ``.prompt()`` accepts into a prompter.

    A prompter is used as is; a str or a ``{"system", "user"}`` dict becomes a
    ``ChatPrompter``; None an ``EmptyPrompter`` (input passed through).
    """
    from prompter import ChatPrompter, EmptyPrompter, PrompterBase

    if prompt is None:
        return EmptyPrompter()
    if isinstance(prompt, type):  # ChatPrompter, not ChatPrompter(...): it would fail only at the first call
        raise ModuleConfigError(
            f"prompt: expected a prompter instance, got the class {prompt.__name__}; "
            f"create one first, e.g. .prompt({prompt.__name__}(...))"
        )
    if isinstance(prompt, PrompterBase):
        return prompt
    if isinstance(prompt, (str, Mapping)):
        return ChatPrompter(prompt)
    if callable(getattr(prompt, "generate_prompt", None)) and callable(getattr(prompt, "get_response", None)):
        return cast("PrompterBase", prompt)  # a duck-typed prompter
    raise ModuleConfigError(
        f"prompt: expected a prompter, a str, a {{'system', 'user'}} dict or None, got {type(prompt).__name__}"
    )


def _plain(value: Any) -> Any:
    """A caller's str, int, float (or a list of them) as exact values: a subclass's own methods never run."""
    if isinstance(value, list):
        return [_plain_scalar(item) for item in list.__iter__(value)]  # one level: options hold flat lists
    return _plain_scalar(value)


def _plain_scalar(value: Any) -> Any:
    if isinstance(value, str):
        return str.__str__(value)  # the characters, whatever the class overrides
    if isinstance(value, bool):
        return value  # bool is final: already exact
    if isinstance(value, int):
        return int.__pos__(value)
    if isinstance(value, float):
        return float.__pos__(value)
    return value


def _shown_value(value: Any) -> str:
    """An option's plain value in an error: the repr of a str, a number, a bool, None or a list of them, else
    its type (an int too long for Python to turn into text is named, not shown)."""
    if type(value) is list and all(_showable(item) for item in value):
        return "[" + ", ".join(repr(item) for item in value) + "]"
    return repr(value) if _showable(value) else f"<a value of type {type(value).__name__}>"


def _showable(value: Any) -> bool:
    kind = type(value)
    return value is None or kind in (str, float, bool) or (kind is int and -(10**30) < value < 10**30)


def _number(low: float, high: float) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and low <= v <= high


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _stops(v: Any) -> bool:
    if isinstance(v, str):
        return v != ""
    return isinstance(v, list) and all(isinstance(s, str) and s != "" for s in v)


# the common OpenAI options, checked before anything is sent; others pass through as given
_OPTION_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "max_tokens": (_count, "a whole number > 0"),
    "max_completion_tokens": (_count, "a whole number > 0"),
    "n": (_count, "a whole number > 0"),
    "temperature": (_number(0, 2), "a number from 0 to 2"),
    "top_p": (_number(0, 1), "a number from 0 to 1"),
    "presence_penalty": (_number(-2, 2), "a number from -2 to 2"),
    "frequency_penalty": (_number(-2, 2), "a number from -2 to 2"),
    "stop": (_stops, "a non-empty str or a list of non-empty str"),
    "seed": (lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number"),
}


class ModuleBase(Generic[RequestT]):
    """Base class of modules: a prompter in front of a backend.

    Subclasses implement :meth:`_build_request` and :meth:`_complete` (and
    optionally :meth:`_stream`). Keep backend state (HTTP session, loaded
    model) in attributes that :meth:`share` can copy by reference: ``share``
    makes a shallow copy of the module, so every handle sees the same objects.
    If a subclass *rebinds* backend attributes later (e.g. ``start()`` sets
    ``self._model``), keep them in one mutable holder object instead, so all
    handles see the change.
    """

    _prompter: PrompterBase | None = None

    generation_options: ClassVar[frozenset[str]] = GENERATION_OPTIONS
    """The generation keywords a call accepts. Any other keyword is a :class:`ModuleConfigError`, never sent:
    a typo (``temprature=``) or another library's keyword would otherwise reach the backend silently.
    A module declares the set it knows (an online module: :data:`OPENAI_OPTIONS` and its provider's extras)."""

    def known_options(self) -> frozenset[str]:
        """The generation options this module's calls accept (its class's set; a module may narrow or widen
        it per instance, e.g. by provider). Anything else is a :class:`ModuleConfigError`, never sent."""
        return self.generation_options

    # -- prompters -------------------------------------------------------------

    def prompt(self: M, prompt: Any = None) -> M:
        """Attach a prompter and return the module (for chaining).

        ``prompt`` may be a prompter, a str or ``{"system", "user"}`` dict (a
        ``ChatPrompter`` is built from it), or None (an ``EmptyPrompter``: the
        input goes to the model as the user message).
        """
        self._prompter = as_prompter(prompt)
        return self

    @property
    def prompter(self) -> PrompterBase:
        """The attached prompter (an ``EmptyPrompter`` until one is attached)."""
        if self._prompter is None:
            self._prompter = as_prompter(None)
        return self._prompter

    def share(
        self: M, prompt: Any = None, format: Any = _UNSET, stream: Any = _UNSET, history: Any = _UNSET
    ) -> M:
        """A second handle on the same backend, with its own prompter.

        The backend (connection pool, loaded model, settings) is shared; only
        the prompter differs. ``prompt`` is read as in :meth:`prompt`; without
        one the handle keeps this module's prompter, as LazyLLM's ``share()``
        does (``m.share().prompt(None)`` for none). LazyLLM's ``format=``,
        ``stream=`` and ``history=`` are a :class:`ModuleConfigError` naming
        what takes their place.
        """
        for name, value in (("format", format), ("stream", stream), ("history", history)):
            if value is not _UNSET:
                raise ModuleConfigError(f"share({name}=...) (a LazyLLM keyword): {_SHARE_REMEDIES[name]}")
        twin = copy.copy(self)
        if prompt is not None:
            twin._prompter = as_prompter(prompt)
        return twin

    # -- calls -----------------------------------------------------------------

    def forward(self, *args: Any, **kwargs: Any) -> NoReturn:
        """LazyLLM's ``forward``: a :class:`ModuleConfigError` naming the call that replaces it."""
        raise ModuleConfigError(
            "forward(...) (a LazyLLM method): call the module itself, m(input, history=..., tools=...), "
            "or m.stream(input) for pieces"
        )

    def build_request(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> RequestT:
        """The request a call with these arguments would send, as a plain value (no I/O).

        ``llm_chat_history=`` is accepted as LazyLLM's name for ``history=``.
        """
        generation = {str.__str__(name): value for name, value in dict.items(generation)}  # exact names
        if "llm_chat_history" in generation:
            alias = generation.pop("llm_chat_history")
            if history is not None and alias is not None:
                raise ModuleConfigError("pass the conversation as history= or llm_chat_history=, not both")
            history = alias if history is None else history
        return self._build_request(input, history, tools, self._check_options(generation, self.known_options()))

    def __call__(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> str | AssistantMessage:
        """Ask the model; return the answer text, or an :data:`AssistantMessage` if it called tools.

        ``generation`` options (``temperature``, ``max_tokens``, ``stop``...)
        go to the backend as they are.
        """
        completion = self._complete(self.build_request(input, history, tools, **generation))
        if completion.tool_calls:
            message = AssistantMessage(
                role="assistant", content=completion.text or None, tool_calls=list(completion.tool_calls)
            )
            if completion.thinking_blocks:
                message["thinking_blocks"] = [dict(block) for block in completion.thinking_blocks]
            return message
        return self._get_response(completion.text, input)

    def stream(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> ChatStream:
        """Ask the model and return a :class:`ChatStream` of text pieces.

        The request is sent before this returns, so configuration and HTTP
        status errors raise here; errors after the first piece (a dropped
        connection) raise while iterating. Pieces are the raw model text: the
        prompter's ``get_response`` is not applied to a stream.
        """
        request = self.build_request(input, history, tools, **generation)
        return ChatStream(self._stream(request))

    # -- hooks for subclasses -------------------------------------------------------

    def _build_request(
        self,
        input: ModuleInput,
        history: Sequence[Any] | None,
        tools: Sequence[Mapping[str, Any]] | None,
        generation: dict[str, Any],
    ) -> RequestT:
        """Build the backend request from the call's arguments, with ``self.prompter``. Pure."""
        raise NotImplementedError(f"{type(self).__name__} must implement _build_request")

    def _complete(self, request: RequestT) -> Completion:
        """Send ``request`` and return the whole answer."""
        raise NotImplementedError(f"{type(self).__name__} must implement _complete")

    def _stream(self, request: RequestT) -> Iterator[StreamDelta]:
        """Send ``request`` and return an iterator of deltas.

        Do the connecting eagerly (before returning the iterator) when you can,
        so errors raise from :meth:`stream` itself. The default completes the
        whole answer and yields it as one delta.
        """
        completion = self._complete(request)
        return iter(
            [
                StreamDelta(
                    text=completion.text,
                    tool_calls=completion.tool_calls,
                    finish_reason=completion.finish_reason,
                )
            ]
        )

    def _get_response(self, text: str, input: ModuleInput) -> str:
        """Extract the answer from the model's text; default: the prompter's ``get_response(text)``.

        The input is not passed on: an API never echoes the prompt, and a
        ``get_response(text, input)`` strips a leading copy of the input. A
        local model that echoes its prompt can override this.
        """
        return self.prompter.get_response(text)

    @staticmethod
    def _check_options(generation: dict[str, Any], known: frozenset[str] = GENERATION_OPTIONS) -> dict[str, Any]:
        """``generation`` without its None values, once every name is ``known`` and every common value valid.

        Names and checked values are read as exact str/int/float: a str subclass's own methods never run.
        """
        generation = {_plain(name): value for name, value in dict.items(generation)}
        bad = sorted(_RESERVED_OPTIONS & generation.keys())
        if bad:
            raise ModuleConfigError(
                f"generation option {bad[0]!r} is set by the module: "
                "pass the conversation as input/history and use .stream() to stream"
            )
        unknown = sorted(name for name in generation if name not in known)
        if unknown:
            raise ModuleConfigError(_unknown_option(unknown[0], known))
        options = {k: v for k, v in generation.items() if v is not None}
        for name, value in options.items():
            check = _OPTION_CHECKS.get(name)
            if check is not None:
                options[name] = value = _plain(value)  # checked and sent as exact values
                if not check[0](value):
                    raise ModuleConfigError(f"generation option {name}={_shown_value(value)}: expected {check[1]}")
        return options


def _unknown_option(name: object, known: frozenset[str]) -> str:
    """The error for a call keyword no option of the module matches: LazyLLM's remedy or the nearest names."""
    shown = repr(name) if isinstance(name, str) and len(name) <= 60 else f"a {type(name).__name__}"
    if isinstance(name, str) and name in _LAZYLLM_KEYWORDS:
        return f"unknown call keyword {shown} (a LazyLLM keyword): {_LAZYLLM_KEYWORDS[name]}"
    close = difflib.get_close_matches(name, sorted(known), n=2) if isinstance(name, str) else []
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    return (
        f"unknown call keyword {shown}: it is not a generation option of this module and is never sent; "
        f"{hint}known options: {', '.join(sorted(known))}; the conversation goes in input= and history="
    )
