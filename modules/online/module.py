"""OnlineChatModule: OpenAI-compatible chat APIs over HTTP, with the official client's reliability.

::

    m = OnlineChatModule(source="deepseek").prompt("You answer in one line.")
    m("What is SSE?")                                   # -> str
    for piece in m.stream("Count to five"): print(piece, end="")

A call is built, then sent:

- :meth:`OnlineChatModule.build_request` returns a :class:`ChatRequest` (URL,
  headers without the key, JSON body): the prompter's ``format="openai"``
  output, plus ``model``, plus the generation options. Pure and testable.
- :meth:`OnlineChatModule._send` sends one attempt with the pooled
  ``requests.Session``; the retry loop around it follows
  :class:`~modules.online.retry.RetryPolicy` (2 retries on connection errors,
  timeouts, 408/409/429/5xx; ``Retry-After`` honoured; backoff with jitter)
  within a total deadline. A stream is never retried once it has begun.

Limits on what a server can make a call cost:

- **Time**: ``Timeout(total=...)`` (default 600 s) bounds the whole call, from
  the first attempt to the last byte of the answer or stream: every socket read
  (status line, headers, body, chunk sizes, stream events, error bodies) waits
  at most the time left, and a retry whose wait (``Retry-After`` included)
  would pass the deadline is not made. Past it: :class:`APITimeoutError` (for a
  stream, :class:`StreamTimeoutError`, which is also a ``StreamInterruptedError``
  with ``partial_text``). Connecting (name resolution, TCP, TLS) fits in the
  connect timeout as a whole. A ``session=`` of your own is bounded the same way
  (through a view of it, see :mod:`modules.online.transport`; it is never changed).
- **Redirects**: only a 307/308 within the origin of ``base_url`` is followed; any
  other redirect raises :class:`~modules.online.redirects.CrossOriginRedirectError`
  before anything (key, conversation) is sent to its target.
- **Size**: ``max_response_bytes`` (default 32 MiB, :data:`MAX_RESPONSE_BYTES`)
  caps a success body, a stream (all of its bytes) and so any single stream
  line; over it, :class:`APIResponseValidationError`. Error bodies are read up to
  1 MiB and truncated (masked first: no part of a key is kept at the cut). Pass ``max_response_bytes=...`` to change it.
- **Shape**: an answer that is JSON of the wrong shape raises
  :class:`APIResponseValidationError` naming the path of the wrong value.

The API key lives in a :class:`Secret` (its repr shows at most the last four
characters), goes only into the ``Authorization`` header of each attempt, and
is masked as ``***`` (with every credential given in ``headers=``, in each form
a server may echo it in: see :mod:`modules.online.scrub`) in everything derived
from what a server sends: error messages and bodies, request ids, log lines,
the answer's text and tool calls, streamed pieces (a key split across events
included: the end of the text that could begin a key is held back until the
next piece shows it is not one) and ``partial_text``. Errors are raised without
chaining the ``requests`` exceptions, whose text includes URLs and could include
more, and leave no frame whose locals hold the key or unscrubbed server data.

Why this file is long: building, sending, retrying, streaming and error mapping share one
deadline, one scrubber and one retry loop per call; the parts that stand alone (sources,
config, transport, shapes, scrubbing, SSE, each native protocol, the call mixin) already
live in their own files beside it.
"""

from __future__ import annotations

import codecs
import functools
import json
import logging
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Concatenate, NoReturn, ParamSpec, cast
from urllib.parse import urlsplit, urlunsplit

import requests
import urllib3

from modules.base import Completion, ModuleBase, ModuleInput, StreamDelta
from modules.errors import (
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    ModuleConfigError,
    StreamError,
    StreamInterruptedError,
    StreamTimeoutError,
    status_error_class,
)
from modules.online.aio import ASYNC_WORKERS, AsyncRunner
from modules.online.calls import Calls
from modules.online.config import Secret, Timeout, check_headers, check_kinds
from modules.online.dialects import Decoder, Dialect, StreamState
from modules.online.native import dialect_for
from modules.online.redirects import MAX_REDIRECTS, CrossOriginRedirectError, next_hop, refuse_unparsable_location
from modules.online.response import StreamEnd, body_request_id, model_of, request_id_of
from modules.online.retry import RetryPolicy
from modules.online.scrub import (
    Scrubber,
    StreamScrubber,
    mask_error,
    mask_library_logs,
    masked_headers,
    secrets_of_headers,
)
from modules.online.shape import NOT_JSON, completion_of, loads, shown
from modules.online.sources import (
    Source,
    choose_format,
    get_source,
    is_source,
    resolve_api_key,
    resolve_base_url,
    shown_url,
)
from modules.online.sse import ChatStreamState, SSEDecoder
from modules.online.transport import (
    arm_response,
    close_adapters,
    deadline_scope,
    mount_deadline_adapters,
    sending_session,
)

if TYPE_CHECKING:  # pragma: no cover
    from prompter.prompters.base import Format

__all__ = ["MAX_RESPONSE_BYTES", "ChatRequest", "OnlineChatModule", "Secret", "Timeout"]

log = logging.getLogger("modules.online")

_USER_AGENT = "prompter-modules/0.1"
_READ_SIZE = 65536
_MAX_ERROR_BODY = 1 << 20
#: Default cap on a response's size in bytes (a success body, or a whole stream): 32 MiB.
MAX_RESPONSE_BYTES = 32 << 20


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completions request as a plain value: where it goes, its headers (no key), its body."""

    url: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]
    stream: bool = False
    scrubber: Scrubber | None = field(default=None, compare=False)  # the module's: masks the key in the repr

    def __post_init__(self) -> None:
        # A plain dict of its own, as the body is: the module's read-only headers cannot be deep-copied
        # (copy.deepcopy, dataclasses.asdict), and pickling then fails on what holds the key, saying so.
        object.__setattr__(self, "headers", dict(self.headers))

    def __repr__(self) -> str:  # a credential header the caller passed in headers= is never shown
        shown = (
            f"ChatRequest(url={self.url!r}, headers={masked_headers(self.headers)!r}, body={self.body!r}, "
            f"stream={self.stream!r})"
        )
        return shown if self.scrubber is None else self.scrubber.text(shown)  # a key written into the body

    def content(self) -> bytes:
        """The body as UTF-8 JSON bytes (what goes on the wire)."""
        try:
            return json.dumps(self.body, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise ModuleConfigError(f"request body is not JSON-serialisable: {exc}") from None


@dataclass
class _Backend:
    """What every handle made by ``share()`` has in common: the pool and the key."""

    session: requests.Session
    api_key: Secret | None
    owns_session: bool = True
    closed: bool = field(default=False)
    derived: dict[int, Any] = field(default_factory=dict)  # deadline twins of a caller's session's adapters


@dataclass
class _Outcome:
    """How one attempt ended: a 2xx ``body`` (or, for a stream, the open ``response``), or an ``error``."""

    response: requests.Response | None = None
    body: bytes = field(default=b"", repr=False)  # server data, not yet scrubbed: kept out of a traceback's locals
    error: APIError | None = None
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    deadline: float | None = None


#: Each native protocol's own request fields a call may pass as keywords (besides the common options,
#: which are translated): Anthropic Messages, Gemini generateContent, Ollama /api/chat.
_NATIVE_OPTIONS: dict[str, frozenset[str]] = {
    "anthropic": frozenset({"stop_sequences", "thinking", "tool_choice", "metadata", "service_tier"}),
    "gemini": frozenset({"generationConfig", "safetySettings", "toolConfig", "cachedContent", "labels"}),
    "ollama": frozenset({"options", "format", "keep_alive", "think"}),
    "ollama_generate": frozenset(
        {"options", "format", "keep_alive", "think", "raw", "suffix", "system", "template", "context"}
    ),
}
#: How a multi-agent conversation is arranged for the dialect (see prompter.render.strategies): per module
#: (constructor) or per call (keywords); passed to the prompter, never sent as such.
_ARRANGEMENT = frozenset({"strategy", "history_header", "as_agent"})


P = ParamSpec("P")


def _masking_given_secrets(
    init: Callable[Concatenate[OnlineChatModule, P], None],
) -> Callable[Concatenate[OnlineChatModule, P], None]:
    """``init``, whose errors show the ``api_key`` and the credential ``headers`` it was given as ``***``
    (an error names a wrong argument with its value: the key passed as ``model`` or ``timeout`` by mistake),
    and leave no frame whose locals hold the arguments (a ``base_url`` with a password, the key, the
    headers) for a traceback that shows locals: the frames below are cleared, this one's are dropped."""

    def made(self: OnlineChatModule, /, *args: P.args, **kwargs: P.kwargs) -> None:
        try:
            init(self, *args, **kwargs)
        except Exception as exc:
            _mask_given_secrets(exc, args, kwargs)
            _forget(exc)
            del args, kwargs
            raise

    functools.update_wrapper(made, init)  # the signature and docstring stay init's
    return made


def _mask_given_secrets(exc: BaseException, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    given = dict(zip(("source", "model", "base_url", "api_key"), args), **kwargs)
    key, headers = given.get("api_key"), given.get("headers")
    secrets = [str.__str__(key)] if isinstance(key, str) else []  # its characters: no method of a subclass
    try:
        secrets += secrets_of_headers(headers) if isinstance(headers, Mapping) else []
    except Exception:  # noqa: BLE001 - a mapping that cannot be read: its own error is the one raised
        pass
    mask_error(exc, Scrubber(secrets))


class OnlineChatModule(Calls, ModuleBase[ChatRequest]):
    """A chat model behind an OpenAI-compatible HTTP API.

    Arguments:
        source: a provider from :data:`modules.online.sources.SOURCES` (``"openai"``,
            ``"deepseek"``, ``"qwen"``, ``"glm"``, ``"kimi"``, ``"doubao"``,
            ``"siliconflow"``, ``"ollama-openai"``, ``"openai-compatible"``; natively:
            ``"anthropic"``, ``"gemini"``, ``"ollama"``, see :mod:`modules.online.dialects`). Default:
            ``"openai-compatible"`` when ``base_url`` is given, else ``"openai"``.
        model: the model name; default: the source's default model.
        base_url: the API root (``.../v1``; for a native source the provider root, as its SDK takes it);
            default: the source's base-URL variable (``OPENAI_BASE_URL``...), else its default.
        api_key: default: the source's environment variable (e.g. ``DEEPSEEK_API_KEY``).
        timeout: seconds, or a :class:`Timeout` (connect, read, total).
        max_retries: retries after the first attempt (default 2).
        generation: default generation options for every call (``temperature``...).
        headers: extra HTTP headers for every request.
        session: a ``requests.Session`` to use (default: a pooled one owned by the module).
        retry: a :class:`~modules.online.retry.RetryPolicy` (its ``sleep``/``clock`` are injectable).
        max_response_bytes: the largest answer accepted, in bytes (a body, or a whole stream);
            default :data:`MAX_RESPONSE_BYTES` (32 MiB). Over it: ``APIResponseValidationError``.
        async_workers: how many ``acall``/``astream`` steps run at once (threads, and pooled
            connections per host); default :data:`~modules.online.aio.ASYNC_WORKERS` (64).
        format: the prompter format whose body is sent, and so the endpoint: the source's own by
            default; ``source="ollama"`` also takes ``"ollama_generate"`` (one prompt to ``/api/generate``).
        strategy, history_header, as_agent: how a multi-agent conversation reaches the API (speaker
            names, one agent's point of view, turns kept or merged under a header), as in
            ``generate_prompt(...)``; defaults per dialect mirror AgentScope's. Each may also be given
            per call, as a keyword.
        url, return_trace, stream: LazyLLM's spellings, refused with the remedy: ``base_url=`` for
            ``url=``; no trace (``return_trace=True``); streaming per call (``stream=True``).
    """

    @_masking_given_secrets
    def __init__(
        self,
        source: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | Timeout | None = None,
        max_retries: int | None = None,
        generation: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
        retry: RetryPolicy | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        async_workers: int = ASYNC_WORKERS,
        stream: bool = False,
        format: str | None = None,
        strategy: str | None = None,
        history_header: str | None = None,
        as_agent: str | None = None,
        url: str | None = None,
        return_trace: bool = False,
    ) -> None:
        _refuse_lazyllm_forms(source, model, stream=stream, url=url, return_trace=return_trace)
        check_kinds(headers, generation, session, retry)
        src: Source = get_source(source or ("openai-compatible" if base_url else "openai"))
        url = resolve_base_url(src, base_url)
        if not url:
            raise ModuleConfigError(f"source {src.name!r} needs base_url=... (e.g. 'http://127.0.0.1:8000/v1')")
        if not isinstance(url, str):
            raise ModuleConfigError(f"base_url: expected a str, got {type(url).__name__}")
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - read to check it: a port that is not a number raises here, not at the call
        except ValueError:
            raise ModuleConfigError(
                "base_url is not a URL whose host and port can be read (not shown: it may hold a credential); "
                "give the API root, e.g. 'https://host/v1' or 'http://[::1]:8000/v1'"
            ) from None
        if parts.username is not None or parts.password is not None:
            # Not echoed: the URL holds a credential. It would also replace the Bearer header.
            raise ModuleConfigError("base_url must not contain a user or password: pass the key as api_key=...")
        if parts.query or parts.fragment:
            # Not echoed either: a query string is where keys hide (?key=...), and the path is appended to it.
            raise ModuleConfigError(
                "base_url must not have a query string or fragment: give the API root (e.g. https://host/v1), "
                "the key as api_key=... and extra query parameters are not supported"
            )
        if not url.startswith(("http://", "https://")):
            raise ModuleConfigError(f"base_url must start with http:// or https://, got {shown_url(url)!r}")
        if model is not None and not isinstance(model, str):
            raise ModuleConfigError(f"model: expected the model name as a str, got {type(model).__name__}")
        chosen_model = model or src.default_model
        if not chosen_model:
            raise ModuleConfigError(f"source {src.name!r} has no default model: pass model=...")
        if type(max_response_bytes) is not int or max_response_bytes < 1:
            raise ModuleConfigError(
                f"max_response_bytes: expected a whole number of bytes >= 1, got {max_response_bytes!r}"
            )
        key = resolve_api_key(src, api_key)
        policy = retry or RetryPolicy()
        if max_retries is not None:
            policy = replace(policy, max_retries=max_retries)
        self.source = src.name
        self.model = chosen_model
        self.base_url = url.rstrip("/")
        self.timeout = Timeout.of(timeout)
        self.retry = policy
        self._url = self.base_url + "/chat/completions"
        self.format = choose_format(src, format)
        # A native protocol (Anthropic, Gemini, Ollama); None: the OpenAI-compatible code below.
        self._dialect: Dialect | None = dialect_for(self.format)
        self._arrangement = _checked_arrangement(strategy, history_header, as_agent)
        self._stream_usage = src.stream_usage  # ask an OpenAI-compatible stream for usage (stream_options)
        self._async = AsyncRunner(async_workers)  # threads for acall/astream, shared by share() handles
        self._generation = ModuleBase._check_options(dict(generation or {}), self.known_options())
        self._headers: Mapping[str, str] = MappingProxyType(
            {
                "Content-Type": "application/json",
                "Accept": "application/json",
                "User-Agent": _USER_AGENT,
                **(self._dialect.headers() if self._dialect else {}),
                **dict(headers or {}),
            }
        )
        self.max_response_bytes = max_response_bytes
        if session is None:
            session = requests.Session()
            # every socket read honours the total deadline; as many pooled connections as async workers
            mount_deadline_adapters(session, pool_maxsize=max(10, async_workers))
            owns = True
        else:
            owns = False
        self._backend = _Backend(session=session, api_key=Secret(key) if key else None, owns_session=owns)
        check_headers(self._headers)
        self._scrubber = Scrubber([*([key] if key else []), *secrets_of_headers(self._headers)])
        mask_library_logs(self._scrubber)  # urllib3 logs unparsable headers (server bytes) at WARNING

    def __copy__(self) -> OnlineChatModule:  # share() and with_options(): a handle on the same backend
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin

    def __reduce__(self) -> Any:  # pickle and deepcopy: the key must not be written out in clear
        raise TypeError(
            f"{type(self).__name__}: cannot be pickled or deep-copied (it holds the API key and a connection "
            "pool): build one in each process from the same arguments (the key from the environment), or use "
            "m.share() for another handle"
        )

    def __repr__(self) -> str:  # the key passed as model= by mistake is masked too
        backend = getattr(self, "_backend", None)
        if backend is None or getattr(self, "_scrubber", None) is None:  # half-built: nothing checked to show
            return f"{type(self).__name__}(<not built>)"
        key = repr(backend.api_key) if backend.api_key else "None"
        return self._scrub(
            f"{type(self).__name__}(source={self.source!r}, model={self.model!r}, "
            f"base_url={self.base_url!r}, api_key={key})"
        )

    # -- lifecycle -------------------------------------------------------------

    def _request_id(self, headers: Mapping[str, str]) -> str | None:
        found = request_id_of(headers)
        return None if found is None else self._scrub(found)

    def start(self, *args: Any, **kwargs: Any) -> NoReturn:
        """LazyLLM's ``start()``: an online module deploys nothing, so a :class:`ModuleConfigError` says so."""
        raise ModuleConfigError(
            "start() (a LazyLLM method): an online module has nothing to start or deploy; leave it out and "
            "call the module, m(input) (TrainableModule(path).start() loads a local model)"
        )

    def close(self) -> None:
        """Close the connection pool (shared by every ``share()`` handle)."""
        self._async.close()
        if self._backend.owns_session and not self._backend.closed:
            _close_session(self._backend.session)
        close_adapters(self._backend.derived)
        self._backend.closed = True

    def _check_open(self) -> None:
        if self._backend.closed:
            raise ModuleConfigError("this module was closed: build a new OnlineChatModule")

    def __enter__(self) -> OnlineChatModule:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def known_options(self) -> frozenset[str]:
        """The call keywords this source accepts: the common options and its own protocol's fields."""
        dialect = getattr(self, "_dialect", None)
        return _known_options(self.generation_options, None if dialect is None else dialect.format)

    # -- building (pure) ---------------------------------------------------------

    def _build_request(
        self,
        input: ModuleInput,
        history: Sequence[Any] | None,
        tools: Sequence[Mapping[str, Any]] | None,
        generation: dict[str, Any],
    ) -> ChatRequest:
        # the prompter validates and copies the tools (a ToolsError names what is wrong)
        dialect = self._dialect
        options = {**self._generation, **generation}
        arrangement = {**self._arrangement, **{k: options.pop(k) for k in _ARRANGEMENT if k in options}}
        prompt = self.prompter.generate_prompt(
            input, history=history, tools=tools, format=cast("Format", self.format), **arrangement
        )
        if dialect is not None:
            native = dialect.request(self.base_url, self.model, prompt, options)
            return ChatRequest(url=native.url, headers=self._headers, body=native.body, scrubber=self._scrubber)
        body = {"model": options.pop("model", self.model), **prompt, **options}
        return ChatRequest(url=self._url, headers=self._headers, body=body, scrubber=self._scrubber)

    def score(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 8) -> list[float]:
        """Mean negative log-likelihood of each ``(context, continuation)``'s continuation (PPL evaluation).

        The contract of ``TrainableModule.score``, through the server's ``/completions`` with
        ``echo`` and ``logprobs`` (see :mod:`modules.online.scoring`); ``batch_size`` texts per request.
        """
        from modules.online import scoring

        if self._dialect is not None:
            raise scoring.unsupported(self.source)
        checked = scoring.checked_pairs(pairs, batch_size)
        out: list[float] = []
        for start in range(0, len(checked), batch_size):
            batch = checked[start : start + batch_size]
            body = scoring.score_body(self.model, [context + continuation for context, continuation in batch])
            url = self.base_url + "/completions"
            request = ChatRequest(url=url, headers=self._headers, body=body, scrubber=self._scrubber)
            try:
                outcome = self._request(request)
            except APIStatusError as exc:
                raise (scoring.refused(exc) or exc) from None
            out += scoring.losses_of(outcome.body, batch)
        return out

    # -- sending -----------------------------------------------------------------

    def _send(self, request: ChatRequest, content: bytes, deadline: float | None) -> requests.Response:
        """Send one attempt, following same-origin 307/308 redirects only (see
        :mod:`modules.online.redirects`: a redirect elsewhere raises before anything is sent there).
        The key and the caller's credential headers are never a local variable here: a traceback that
        shows locals (``capture_locals``, an error tracker) would show them."""
        session = sending_session(self._backend.session, self._backend.derived)
        url = request.url
        for hops in range(MAX_REDIRECTS + 1):
            response: requests.Response = session.post(
                url,
                data=content,
                headers=self._wire_headers(request),
                timeout=self._timeouts(deadline),
                stream=True,
                allow_redirects=False,
                hooks={"response": self._unparsable_redirect},
            )
            try:
                target = next_hop(url, response.status_code, response.headers, hops, self._scrub)
            except CrossOriginRedirectError as exc:
                exc.request_id = self._request_id(response.headers)
                _finish(response)
                raise
            if target is None:
                return response
            _finish(response)
            url = target
        raise AssertionError("unreachable: next_hop refuses the hop after MAX_REDIRECTS")  # pragma: no cover

    def _unparsable_redirect(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        """A hook run inside ``requests`` before it reads a redirect's target for ``response.next``:
        a ``Location`` that is no URL is refused typed there (it escaped as a bare ``ValueError``)."""
        try:
            refuse_unparsable_location(response.status_code, response.headers)
        except CrossOriginRedirectError as exc:
            exc.request_id = self._request_id(response.headers)
            _finish(response)
            raise

    def _wire_headers(self, request: ChatRequest) -> dict[str, str]:
        """The headers one attempt sends, the key included: the only place the key is read."""
        headers = dict(request.headers)
        if request.stream:
            headers["Accept"] = "text/event-stream"
        if self._backend.api_key is not None:
            key = self._backend.api_key.reveal()
            headers.update({"Authorization": "Bearer " + key} if self._dialect is None else self._dialect.auth(key))
        return headers

    def _complete(self, request: ChatRequest) -> Completion:
        outcome = self._request(request)
        return self._parse_completion(outcome.body, outcome.status)

    def _stream(self, request: ChatRequest, end: StreamEnd | None = None) -> Iterator[StreamDelta]:
        end = end or StreamEnd()
        if self._dialect is None:
            usage = {"stream_options": {"include_usage": True}} if self._stream_usage else {}
            request = replace(request, stream=True, body={**usage, **request.body, "stream": True})
        else:
            native = self._dialect.streamed(request.url, request.body)
            request = replace(request, stream=True, url=native.url, body=native.body)
        outcome = self._request(request)
        end.request_id = self._request_id(outcome.headers)
        response = outcome.response
        assert response is not None  # noqa: S101 - a stream's outcome keeps its open response
        if response.headers.get("content-type", "").startswith("application/json"):
            # Some servers ignore "stream": true, or answer an error as JSON with a 2xx status.
            done = self._parse_completion(self._read_whole(response, outcome.deadline), response.status_code)
            end.usage, end.model, end.ended = done.usage, model_of(done.raw), True
            end.request_id = end.request_id or body_request_id(done.raw)
            end.thinking_blocks = done.thinking_blocks
            return iter([StreamDelta(done.text, done.tool_calls, done.finish_reason)])
        return _forgetting(self._iter_stream(response, outcome.deadline, end, request.body))

    def _read_whole(self, response: requests.Response, deadline: float | None) -> bytes:
        """A 2xx body read to its end (a stream answered as one JSON body), the connection given back."""
        failure: APIError | None = None
        try:
            body = self._read_all(response, deadline, self.max_response_bytes)
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            failure = self._connection_error(exc, deadline)
        finally:
            _finish(response)
        if failure is not None:  # raised here, outside the handler: no __context__ holding server data
            raise failure
        return body

    def _request(self, request: ChatRequest) -> _Outcome:
        """Send with retries; return a 2xx outcome (its body read, or a stream's open response) or raise."""
        self._check_open()
        policy, limits = self.retry, self.timeout
        content = request.content()
        deadline = None if limits.total is None else policy.clock() + limits.total
        attempt = 0
        while True:
            try:
                outcome = self._attempt(request, content, deadline)
            except APIError as exc:  # raised inside an attempt (a refused redirect, the deadline)
                _forget(exc)  # the finished frames' locals hold the response's (unscrubbed) headers
                raise
            if outcome.error is None:
                outcome.deadline = deadline
                return outcome
            error = outcome.error
            if attempt >= policy.max_retries or not policy.should_retry(outcome.status, outcome.headers):
                raise error
            wait = policy.delay(attempt, outcome.headers)
            if deadline is not None and policy.clock() + wait >= deadline:  # never sleep past the deadline
                log.debug("not retrying %s: the %s s deadline would pass", _loggable(request.url), limits.total)
                raise error
            attempt += 1
            log.info(
                "retrying %s in %.2f s (retry %d of %d) after: %s",
                _loggable(request.url),
                wait,
                attempt,
                policy.max_retries,
                error,  # masked: built only from scrubbed server data
            )
            policy.sleep(wait)

    def _attempt(self, request: ChatRequest, content: bytes, deadline: float | None) -> _Outcome:
        """One attempt, its failure turned into an error value (raised or retried by the caller)."""
        log.debug("POST %s", _loggable(request.url))
        try:
            with deadline_scope(deadline, self.retry.clock):
                response = self._send(request, content, deadline)
        except requests.RequestException as exc:
            return _Outcome(error=self._connection_error(exc, deadline))
        status, headers = response.status_code, response.headers
        if not self._backend.owns_session:
            arm_response(response, deadline, self.retry.clock)  # a caller's session: bound the body's reads
        try:
            if 200 <= status < 300 and request.stream:
                return _Outcome(response=response, status=status, headers=headers)
            if status < 300:
                body = self._read_all(response, deadline, self.max_response_bytes)
            else:
                body = self._read_all(response, deadline, _MAX_ERROR_BODY, truncate=True)
        except APITimeoutError as exc:
            return _Outcome(error=exc)  # retried like a connection error, if time is left
        except APIError as exc:
            return _Outcome(error=exc, status=status)  # too large: asking again would not help
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            return _Outcome(error=self._connection_error(exc, deadline))
        finally:
            if not (request.stream and 200 <= status < 300):
                _finish(response)
        if status < 300 and status not in (204, 205) and not body and _close_delimited(headers):
            return _Outcome(error=_no_body())  # a cut header block reads as a complete one: retried
        if status < 300:
            return _Outcome(body=body, status=status, headers=headers)
        log.debug("%s answered %d", _loggable(request.url), status)
        error = self._status_error(status, headers, body, cut=len(body) > _MAX_ERROR_BODY)
        return _Outcome(error=error, status=status, headers=headers)

    def _timeouts(self, deadline: float | None) -> tuple[float, float]:
        connect, read = self.timeout.connect, self.timeout.read
        if deadline is not None:
            left = deadline - self.retry.clock()
            if left <= 0:
                raise self._deadline_error()
            connect, read = min(connect, left), min(read, left)
        return connect, read

    def _deadline_error(self) -> APITimeoutError:
        return APITimeoutError(
            f"Request timed out: the total deadline of {self.timeout.total} s passed "
            "(raise it with timeout=Timeout(total=...))."
        )

    def _past(self, deadline: float | None) -> bool:
        return deadline is not None and self.retry.clock() >= deadline

    def _read_all(
        self, response: requests.Response, deadline: float | None, limit: int, truncate: bool = False
    ) -> bytes:
        """The body, up to ``limit`` bytes; a success body over it refused. ``truncate`` (an error body): the
        reading stops past ``limit`` and all that was read comes back, to be masked before it is cut."""
        parts: list[bytes] = []
        size = 0
        for chunk in response.iter_content(_READ_SIZE):
            parts.append(chunk)
            size += len(chunk)
            if size > limit:
                if truncate:
                    break
                raise self._too_large()
            if self._past(deadline):
                raise self._deadline_error()
        return b"".join(parts)

    def _too_large(self) -> APIResponseValidationError:
        return APIResponseValidationError(
            f"the answer is larger than max_response_bytes={self.max_response_bytes}: "
            "pass OnlineChatModule(max_response_bytes=...) to accept larger answers"
        )

    def _iter_stream(
        self,
        response: requests.Response,
        deadline: float | None,
        end: StreamEnd | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Iterator[StreamDelta]:
        state: StreamState
        decoder: Decoder
        if self._dialect is None:
            state = ChatStreamState(scrub=self._scrubber.value, may_hide=self._scrubber.may_hide)
            decoder = SSEDecoder(max_line=self.max_response_bytes)
        else:
            state = self._dialect.stream_state(self._scrubber.value, self._scrubber.may_hide, body)
            decoder = self._dialect.decoder(self.max_response_bytes)
        shown = StreamScrubber(self._scrubber)
        read = _reader(response)
        size = 0
        try:
            while True:
                cut: StreamInterruptedError | None = None
                try:
                    chunk = read()
                except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
                    chunk = b""
                    if not state.complete:  # lost after the finish: harmless, the answer was whole
                        cut = (
                            self._stream_deadline_error(state) if self._past(deadline) else self._cut_short(exc, state)
                        )
                if cut is not None:  # raised outside the handler: no __context__ holding server data
                    raise cut
                if not chunk:
                    break
                size += len(chunk)
                if size > self.max_response_bytes:
                    raise self._too_large()
                for event in decoder.feed(chunk):
                    delta = self._masked(state.on_event(event), shown)
                    if delta is not None:
                        yield delta
                if state.done or (state.complete and self._past(deadline)):  # whole: the rest is not waited for
                    break
                if self._past(deadline):
                    raise self._stream_deadline_error(state)
            for event in decoder.flush() if not state.complete else ():  # a last line without its newline
                delta = self._masked(state.on_event(event), shown)
                if delta is not None:
                    yield delta
            decoder.close()
            if not state.complete:
                wrong = getattr(state, "shape_error", None)  # Gemini: no event carried candidates
                if wrong is not None:
                    raise wrong
                raise StreamInterruptedError(
                    f"the stream ended without [DONE] or a finish reason after {len(state.text)} characters",
                    partial_text=self._scrub(state.text),
                )
            if end is not None:  # read to its end: the whole response is known
                end.usage, end.model, end.ended = getattr(state, "usage", None), getattr(state, "model", None), True
                end.request_id = end.request_id or getattr(state, "response_id", None)  # Gemini: in the body
                end.thinking_blocks = tuple(getattr(state, "thinking_blocks", ()))
            rest = shown.flush()
            if rest:
                yield StreamDelta(text=rest)
        except (StreamError, StreamInterruptedError) as exc:
            exc.partial_text = self._scrub(exc.partial_text)  # the state's text may hold a key split across events
            raise
        finally:
            _finish(response)

    @staticmethod
    def _masked(delta: StreamDelta | None, shown: StreamScrubber) -> StreamDelta | None:
        """``delta`` with its text passed through the stream scrubber (all of it, once the stream finishes)."""
        if delta is None:
            return None
        text = shown.feed(delta.text)
        if delta.finish_reason is not None or delta.tool_calls:
            text += shown.flush()
        elif not text:
            return None
        return StreamDelta(text=text, tool_calls=delta.tool_calls, finish_reason=delta.finish_reason)

    def _cut_short(self, exc: BaseException, state: StreamState) -> StreamInterruptedError:
        return StreamInterruptedError(
            f"the stream was cut short ({self._describe(exc)}) after {len(state.text)} characters",
            partial_text=self._scrub(state.text),
        )

    def _stream_deadline_error(self, state: StreamState) -> StreamTimeoutError:
        return StreamTimeoutError(
            f"the stream ran past the total deadline of {self.timeout.total} s after {len(state.text)} characters "
            "(raise it with timeout=Timeout(total=...))",
            partial_text=self._scrub(state.text),
        )

    # -- errors ------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        return self._scrubber.text(text)

    def _parse_completion(self, raw: bytes, status: int | None) -> Completion:
        """The :class:`Completion` in a 2xx body; an error leaves with no frame's locals holding the body
        as it came (not scrubbed), for a traceback that shows locals."""
        try:
            return self._completion_in(raw, status)
        except APIError as exc:
            del raw
            _forget(exc)
            raise

    def _completion_in(self, raw: bytes, status: int | None) -> Completion:
        text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")  # a BOM may lead (RFC 8259 8.1)
        data = loads(text)
        if data is NOT_JSON:  # raised outside the handler: its __context__ would hold the body
            raise APIResponseValidationError(f"the answer is not JSON: {self._scrub(text)[:200]!r}")
        if self._scrubber.may_hide(text):  # after decoding: an escape cannot hide the key
            data = self._scrubber.value(data)
        if isinstance(data, dict) and data.get("error"):
            error = data["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            raise APIError(f"the server answered {status} with an error: {shown(message, 500)}")
        return completion_of(data) if self._dialect is None else self._dialect.completion(data)

    def _describe(self, exc: BaseException) -> str:
        _forget(exc)
        return self._scrub(f"{type(exc).__name__}: {exc}")

    def _connection_error(self, exc: BaseException, deadline: float | None = None) -> APIConnectionError:
        if self._past(deadline):
            _forget(exc)
            return self._deadline_error()
        timeouts = (requests.Timeout, urllib3.exceptions.TimeoutError, TimeoutError)
        if isinstance(exc, requests.ConnectionError) and exc.args:
            # reading a body, requests re-wraps urllib3's ReadTimeoutError as a plain ConnectionError
            inner = exc.args[0]
            if isinstance(inner, urllib3.exceptions.ReadTimeoutError):
                _forget(exc)
                exc = inner
        if isinstance(exc, timeouts):
            return APITimeoutError(f"Request timed out ({self._describe(exc)}).")
        return APIConnectionError(f"Connection error ({self._describe(exc)}).")

    def _status_error(self, status: int, headers: Mapping[str, str], raw: bytes, cut: bool = False) -> APIStatusError:
        """The typed error for an error answer; ``cut``: ``raw`` is the beginning of a longer body, masked
        before it is cut to the error body cap (a key across the cut is masked whole, or dropped)."""
        if cut:  # a character cut short at the end of what was read is left out, not replaced
            start = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(raw, final=False)
            text = self._scrubber.cut(start, _MAX_ERROR_BODY)
        else:
            text = self._scrub(raw.decode("utf-8", errors="replace"))
        body: Any = text or None
        message = text[:500] or f"HTTP {status}"
        decoded = loads(text)
        if decoded is not NOT_JSON:
            body = self._scrubber.value(decoded)
        if isinstance(body, dict):
            error = body.get("error", body)
            if isinstance(error, dict):
                value = error.get("message") or error.get("msg")
                if value:
                    message = value if isinstance(value, str) else shown(value, 500)
            elif isinstance(error, str):
                message = error
        request_id = headers.get("x-request-id") or headers.get("request-id")  # Anthropic: request-id
        kind = status_error_class(status)
        if self._dialect is not None and self._dialect.is_auth_failure(status, body):
            kind = AuthenticationError  # e.g. Gemini answers a wrong API key with 400 API_KEY_INVALID
        return kind(
            message,
            status_code=status,
            request_id=None if request_id is None else self._scrub(request_id),
            body=body,
        )


@functools.lru_cache(maxsize=16)
def _known_options(common: frozenset[str], native: str | None) -> frozenset[str]:
    """The call keywords of a source speaking ``native`` (None: OpenAI-compatible); made once, read per call."""
    return common | (_NATIVE_OPTIONS[native] if native is not None else frozenset()) | _ARRANGEMENT


def _refuse_lazyllm_forms(source: object, model: object, *, stream: bool, url: object, return_trace: bool) -> None:
    """A ``ModuleConfigError`` naming prompter's form for LazyLLM's constructor forms it does not take."""
    if stream:  # LazyLLM's OnlineChatModule(stream=True): here streaming is chosen per call
        raise ModuleConfigError(
            "stream=True: this module streams per call — use m.stream(input) (or m.astream) for pieces; "
            "m(input) returns the whole answer"
        )
    if url is not None:
        raise ModuleConfigError("url=: this module takes the API root as base_url=... (e.g. base_url='https://host/v1')")
    if return_trace:
        raise ModuleConfigError(
            "return_trace: not supported (there is no trace); leave it out — build_request(input) shows what is sent"
        )
    if isinstance(source, str) and not is_source(source) and isinstance(model, str) and is_source(model):
        # LazyLLM's positional order is (model, source)
        raise ModuleConfigError(
            f"unknown source {source!r}, but {model!r} is a source: prompter's order is OnlineChatModule(source, "
            f"model), LazyLLM's is (model, source); pass them by keyword: "
            f"OnlineChatModule(source={model!r}, model={source!r})"
        )


def _checked_arrangement(strategy: object, history_header: object, as_agent: object) -> dict[str, Any]:
    """The module's multi-agent options that are set, once the prompter's own checks pass."""
    from prompter.errors import PromptError
    from prompter.render.strategies import checked_options

    try:
        checked_options(strategy, history_header, as_agent)
    except PromptError as exc:
        raise ModuleConfigError(f"OnlineChatModule({exc})") from None
    given = {"strategy": strategy, "history_header": history_header, "as_agent": as_agent}
    return {name: value for name, value in given.items() if value is not None}


@functools.lru_cache(maxsize=64)
def _loggable(url: str) -> str:
    """``url`` without user info or query string, which might carry credentials."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _close_session(session: requests.Session) -> None:
    """Close a session's pooled connections now.

    urllib3 2 closes a dropped pool's connections only when the pool is garbage
    collected, which a reference cycle (say, a kept traceback) can postpone.
    """
    for adapter in session.adapters.values():
        pools = getattr(getattr(adapter, "poolmanager", None), "pools", None)
        if pools is None:
            continue
        for key in list(pools.keys()):
            pool = pools.get(key)
            if pool is not None:
                pool.close()
    session.close()


def _forget(exc: BaseException) -> None:
    """Clear the locals of the finished frames of ``exc`` and its chain.

    Those frames (inside requests/urllib3) hold connections and pools in reference
    cycles with the exception; clearing them lets sockets close now, not at the next GC.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if current.__traceback__ is not None:
            traceback.clear_frames(current.__traceback__)
        current = current.__cause__ or current.__context__


def _forgetting(pieces: Iterator[StreamDelta]) -> Iterator[StreamDelta]:
    """``pieces``, and an error they raise with the locals of its finished frames cleared: the stream's
    frame holds the server's last event and bytes as they came, before scrubbing."""
    try:
        yield from pieces
    except Exception as exc:
        _forget(exc)
        raise


def _close_delimited(headers: Mapping[str, str]) -> bool:
    """Whether a body ends only when the connection closes (neither a length nor chunked framing)."""
    return "content-length" not in headers and "chunked" not in headers.get("transfer-encoding", "").lower()


def _no_body() -> APIConnectionError:
    """A 2xx answer whose connection closed before any byte of a close-delimited body: HTTP cannot tell a
    header block cut short (the parser takes the end of the bytes for its end) from a complete one, and
    no protocol here answers an empty body, so it is a connection error, retried as the openai client
    retries a cut header block."""
    return APIConnectionError(
        "Connection error (the server closed the connection before the answer's body; "
        "its header block may have been cut short)."
    )


def _finish(response: requests.Response) -> None:
    """Give a response's connection back: to the pool if it was read to the end, else closed."""
    response.close()
    # A released connection is closed by the pool later, but this response's own file object
    # would keep the socket open for as long as the response lives (e.g. in a kept traceback).
    response.raw.close()


def _reader(response: requests.Response) -> Any:
    """A function returning the next bytes available (b"" at the end), without waiting for a full buffer."""
    raw = response.raw
    read1 = getattr(raw, "read1", None)
    if read1 is not None:
        return lambda: read1(_READ_SIZE, decode_content=True)  # gzip'd streams too
    chunks = response.iter_content(chunk_size=None)  # urllib3 < 2.2: chunked streams still arrive per chunk
    return lambda: next(chunks, b"")
