"""An OpenAI-compatible HTTP server over a local module (FastAPI + uvicorn in a thread).

``TrainableModule(path).start(serve=True)`` runs it; ``module.url`` is the base
URL to give any OpenAI client::

    import openai
    m = TrainableModule(path).start(serve=True)
    client = openai.OpenAI(base_url=m.url, api_key="unused")
    client.chat.completions.create(model=m.name, messages=[{"role": "user", "content": "hi"}])
    m.stop()

Endpoints: ``POST /v1/chat/completions`` (stream or not, tools),
``POST /v1/completions``, ``GET /v1/models``, ``GET /v1/models/{id}``,
``GET /health``; the schema is at ``/openapi.json``.

What the server promises:

* every error is OpenAI's envelope ``{"error": {"message", "type", "param",
  "code"}}`` with the matching status: 400 invalid request (and
  ``code="context_length_exceeded"``), 404 unknown model or path, 405, 413 body
  over ``max_body_bytes`` (2 MB), 429 over ``max_concurrency`` requests in
  flight (with ``Retry-After``), 503 while stopping. Messages are capped in
  length and never carry a traceback;
* user text is tokenized as data (see :func:`modules.local.trainable.encode_with_spans`);
* requests never mix: the module serialises generation (or batches it, with
  ``TrainableModule(max_batch_size=N)``);
* a client that disconnects, mid-stream or while waiting for a plain answer,
  stops its generation at the next token;
* ``stop()`` ends streams in flight with an error event and plain requests
  with a 503, never a silent cut.

The served object is duck-typed (see :class:`ServableModule`); ``TrainableModule`` is one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from modules.base import Completion, StreamDelta
from modules.errors import ContextLengthError, ModuleConfigError, ModuleError, ServerStoppedError

__all__ = ["ServableModule", "ServerThread", "create_app"]

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 2 * 1024 * 1024
_MAX_MESSAGE_CHARS = 1000


class ServableModule(Protocol):
    """What the server needs from a module (``TrainableModule`` provides it)."""

    name: str

    def prepare(self, messages: Any, tools: Any = None, **generation: Any) -> Any: ...
    def prepare_text(self, prompt: str, **generation: Any) -> Any: ...
    def generate(self, request: Any, cancel: threading.Event | None = None) -> Completion: ...
    def generate_stream(self, request: Any, cancel: threading.Event | None = None) -> Iterator[StreamDelta]: ...


# -- errors -------------------------------------------------------------------------------------


class HTTPError(Exception):
    """An error answered with OpenAI's envelope."""

    def __init__(
        self,
        status: int,
        message: str,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type, param, code
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        """The ``{"error": {...}}`` body, its message capped in length."""
        message = self.message if len(self.message) <= _MAX_MESSAGE_CHARS else self.message[:_MAX_MESSAGE_CHARS] + "..."
        return {"error": {"message": message, "type": self.type, "param": self.param, "code": self.code}}


def _from_exception(exc: BaseException) -> HTTPError:
    """Map what the module raised to an HTTP error; unknown failures become a bare 500."""
    if isinstance(exc, HTTPError):
        return exc
    if isinstance(exc, ContextLengthError):
        return HTTPError(400, str(exc), param="messages", code="context_length_exceeded")
    if isinstance(exc, ServerStoppedError):
        return HTTPError(503, str(exc), type="server_error", code="server_shutting_down")
    if isinstance(exc, (ModuleError, ValueError, TypeError, KeyError, LookupError)):
        return HTTPError(400, str(exc) or type(exc).__name__)
    try:
        import jinja2

        if isinstance(exc, jinja2.TemplateError):
            return HTTPError(400, f"the model's chat template rejected the conversation: {exc}")
    except ImportError:  # pragma: no cover
        pass
    logger.error("request failed", exc_info=exc)
    return HTTPError(500, "internal server error", type="server_error")


# -- request bodies (the OpenAPI schema comes from these) ----------------------------------------


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class FunctionCall(_Open):
    name: str
    arguments: str | dict[str, Any] = "{}"


class ToolCallIn(_Open):
    id: str | None = None
    type: Literal["function"] = "function"
    function: FunctionCall


class ContentPart(_Open):
    type: str
    text: str | None = None


class Message(_Open):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCallIn] | None = None
    tool_call_id: str | None = None


class FunctionDef(_Open):
    name: str = Field(min_length=1, max_length=256)
    description: str | None = None
    parameters: dict[str, Any] | None = None


class Tool(_Open):
    type: Literal["function"] = "function"
    function: FunctionDef


class StreamOptions(_Open):
    include_usage: StrictBool | None = None


class Sampling(_Open):
    model: str
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    stop: str | list[str] | None = None
    seed: int | None = None
    n: int | None = Field(default=None, ge=1)  # above 1: a 400 "not supported" (one choice per request)
    stream: StrictBool | None = False
    stream_options: StreamOptions | None = None


class ChatCompletionRequest(Sampling):
    messages: list[Message] = Field(min_length=1)
    tools: list[Tool] | None = None
    tool_choice: Any = None
    max_completion_tokens: int | None = Field(default=None, ge=1)


class CompletionRequest(Sampling):
    prompt: str | list[str]


# -- the app ------------------------------------------------------------------------------------


@dataclass
class _State:
    module: Any
    model_name: str
    max_concurrency: int
    in_flight: int = 0
    closing: bool = False
    created: int = field(default_factory=lambda: int(time.time()))
    cancels: set[threading.Event] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    executor: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        self.executor = ThreadPoolExecutor(self.max_concurrency, thread_name_prefix="prompter-generate")

    def admit(self) -> threading.Event:
        with self.lock:
            if self.closing:
                raise HTTPError(503, "the server is shutting down", type="server_error", code="server_shutting_down")
            if self.in_flight >= self.max_concurrency:
                raise HTTPError(
                    429,
                    f"over the limit of {self.max_concurrency} requests in flight; retry shortly",
                    type="rate_limit_error",
                    code="rate_limit_exceeded",
                    headers={"Retry-After": "1"},
                )
            self.in_flight += 1
            cancel = threading.Event()
            self.cancels.add(cancel)
            return cancel

    def release(self, cancel: threading.Event) -> None:
        with self.lock:
            self.in_flight -= 1
            self.cancels.discard(cancel)

    def close(self) -> None:
        with self.lock:
            self.closing = True
        self.executor.shutdown(wait=False)


def create_app(
    module: Any,
    *,
    model_name: str | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    max_concurrency: int = 128,
) -> Any:
    """A FastAPI app serving *module* under OpenAI's paths.

    ``model_name`` is the id clients must send (default ``module.name``);
    requests naming another model get 404 ``model_not_found``.
    """
    from fastapi import FastAPI
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, StreamingResponse
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException as StarletteHTTPException

    for option, value, least in (("max_concurrency", max_concurrency, 1), ("max_body_bytes", max_body_bytes, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ModuleConfigError(f"{option}: expected an int >= {least}, got {value!r}")
    if model_name is not None and (not isinstance(model_name, str) or not model_name):
        raise ModuleConfigError(f"model_name: expected a non-empty str, got {model_name!r}")
    state = _State(module=module, model_name=model_name or module.name, max_concurrency=max_concurrency)
    app = FastAPI(title="prompter local model server", version="1", docs_url=None, redoc_url=None)
    app.state.prompter = state
    app.add_middleware(_BodyLimit, max_bytes=max_body_bytes)

    def error_response(err: HTTPError) -> JSONResponse:
        return JSONResponse(err.body(), status_code=err.status, headers=err.headers)

    @app.exception_handler(HTTPError)
    async def _http_error(request: Request, exc: HTTPError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        loc = [str(p) for p in first.get("loc", ()) if p != "body"]
        what = first.get("msg", "invalid request body")
        where = ".".join(loc)
        return error_response(HTTPError(400, f"{where}: {what}" if where else what, param=where or None))

    @app.exception_handler(StarletteHTTPException)
    async def _starlette(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
        return error_response(HTTPError(exc.status_code, str(exc.detail), type=kind, headers=exc.headers))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        return error_response(_from_exception(exc))

    def check_model(name: str) -> None:
        if name != state.model_name:
            raise HTTPError(
                404,
                f"the model {name[:100]!r} does not exist; this server serves {state.model_name!r}",
                param="model",
                code="model_not_found",
            )

    @app.get("/health")
    async def health() -> dict[str, Any]:
        """Liveness: ``{"status": "ok"}`` while serving, 503 once stopping."""
        if state.closing:
            raise HTTPError(503, "the server is shutting down", type="server_error", code="server_shutting_down")
        return {"status": "ok", "model": state.model_name, "in_flight": state.in_flight}

    def model_card() -> dict[str, Any]:
        return {"id": state.model_name, "object": "model", "created": state.created, "owned_by": "prompter"}

    @app.get("/v1/models")
    async def list_models() -> dict[str, Any]:
        """The one model this server serves."""
        return {"object": "list", "data": [model_card()]}

    @app.get("/v1/models/{model_id:path}")
    async def get_model(model_id: str) -> dict[str, Any]:
        """The model card, or 404 for another id."""
        check_model(model_id)
        return model_card()

    @app.post("/v1/chat/completions", response_model=None)
    async def chat_completions(body: ChatCompletionRequest, http: Request) -> Any:
        """OpenAI chat completions; ``stream=true`` answers with server-sent events."""
        check_model(body.model)
        _refuse_unsupported(body, chat=True)
        messages = [_message_dict(m, i) for i, m in enumerate(body.messages)]
        offer_tools = body.tools and body.tool_choice != "none"
        tools = [t.model_dump(exclude_none=True) for t in body.tools] if offer_tools and body.tools else None
        options = _options(body, chat=True)
        cancel = state.admit()
        try:
            request = await run_in_threadpool(lambda: module.prepare(messages, tools, **options))
        except BaseException as exc:
            state.release(cancel)
            raise _from_exception(exc) from None
        rid = "chatcmpl-" + uuid.uuid4().hex
        if body.stream:
            usage = bool(body.stream_options and body.stream_options.include_usage)
            events = _chat_events(state, request, cancel, rid, usage)
            return StreamingResponse(events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
        done = await _generate(state, request, cancel, http)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": done.text if not done.tool_calls else (done.text or None),
        }
        if done.tool_calls:
            message["tool_calls"] = [dict(c) for c in done.tool_calls]
        return {
            "id": rid,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": state.model_name,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": _finish(done.finish_reason),
                    "logprobs": None,
                }
            ],
            "usage": dict(done.usage or {}),
        }

    @app.post("/v1/completions", response_model=None)
    async def completions(body: CompletionRequest, http: Request) -> Any:
        """OpenAI (legacy) text completions: the prompt is plain text, never control tokens."""
        check_model(body.model)
        _refuse_unsupported(body, chat=False)
        prompt = body.prompt
        if isinstance(prompt, list):
            if len(prompt) != 1:
                raise HTTPError(400, "prompt: this server takes one prompt per request", param="prompt")
            prompt = prompt[0]
        options = _options(body, chat=False)
        cancel = state.admit()
        try:
            request = await run_in_threadpool(lambda: module.prepare_text(prompt, **options))
        except BaseException as exc:
            state.release(cancel)
            raise _from_exception(exc) from None
        rid = "cmpl-" + uuid.uuid4().hex
        if body.stream:
            return StreamingResponse(
                _text_events(state, request, cancel, rid),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache"},
            )
        done = await _generate(state, request, cancel, http)
        return {
            "id": rid,
            "object": "text_completion",
            "created": int(time.time()),
            "model": state.model_name,
            "choices": [
                {
                    "index": 0,
                    "text": done.text,
                    "finish_reason": _finish(done.finish_reason),
                    "logprobs": None,
                }
            ],
            "usage": dict(done.usage or {}),
        }

    return app


async def _generate(state: _State, request: Any, cancel: threading.Event, http: Any) -> Completion:
    """Run one generation in the server's pool; a client that hangs up cancels it."""
    loop = asyncio.get_running_loop()

    async def watch(future: asyncio.Future[Any]) -> None:
        while not future.done():
            if await http.is_disconnected():
                cancel.set()  # nobody will read the answer: free the model at the next token
                return
            await asyncio.sleep(0.05)

    try:
        # Our own pool, one thread per admitted request: waiting for the model (the lock or a
        # batch) must not use up the small shared pool that prepare() and the app need.
        future = loop.run_in_executor(state.executor, state.module.generate, request, cancel)
        watcher = asyncio.ensure_future(watch(future))
        try:
            done: Completion = await future
        finally:
            watcher.cancel()
    except asyncio.CancelledError:
        cancel.set()
        raise
    except RuntimeError as exc:
        if state.closing:  # the pool was shut down between admission and here
            raise _cancelled(state) from None
        raise _from_exception(exc) from None
    except BaseException as exc:
        raise _from_exception(exc) from None
    finally:
        state.release(cancel)
    if done.finish_reason == "cancelled":
        raise _cancelled(state)
    return done


def _cancelled(state: _State) -> HTTPError:
    if state.closing:
        return HTTPError(
            503,
            "the server stopped before this answer was complete",
            type="server_error",
            code="server_shutting_down",
        )
    return HTTPError(499, "the request was cancelled", type="server_error", code="cancelled")


def _finish(reason: str | None) -> str:
    return reason if reason in ("stop", "length", "tool_calls", "content_filter") else "stop"


def _message_dict(message: Any, index: int = 0) -> dict[str, Any]:
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


def _refuse_unsupported(body: Any, chat: bool) -> None:
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


def _options(body: Any, chat: bool) -> dict[str, Any]:
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


# -- streaming ------------------------------------------------------------------------------------


def _sse(data: Any) -> bytes:
    return b"data: " + json.dumps(data, ensure_ascii=False).encode() + b"\n\n"


async def _deltas(
    state: _State, make: Callable[[], Iterator[StreamDelta]], cancel: threading.Event
) -> AsyncIterator[Any]:
    """Run a blocking delta iterator in a thread and hand its items to the event loop.

    Yields StreamDelta items, then re-raises whatever the iterator raised. If
    the consumer goes away (client disconnect cancels us), the cancel flag stops
    the generation at its next token.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def put(item: tuple[str, Any]) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is gone: nobody is listening any more
            cancel.set()

    def pump() -> None:
        try:
            for delta in make():
                put(("delta", delta))
            put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - forwarded to the consumer
            put(("error", exc))

    threading.Thread(target=pump, name="prompter-stream", daemon=True).start()
    try:
        while True:
            kind, value = await queue.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        cancel.set()
        state.release(cancel)


async def _chat_events(
    state: _State, request: Any, cancel: threading.Event, rid: str, usage: bool
) -> AsyncIterator[bytes]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": state.model_name,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
            }
        )

    yield chunk({"role": "assistant", "content": ""})
    counts: dict[str, int] = {}
    try:
        async for delta in _deltas(state, lambda: state.module.generate_stream(request, cancel, counts), cancel):
            if delta.text:
                yield chunk({"content": delta.text})
            if delta.tool_calls:
                calls = [{"index": i, **dict(c)} for i, c in enumerate(delta.tool_calls)]
                yield chunk({"tool_calls": calls})
            if delta.finish_reason == "cancelled":
                raise _cancelled(state)
            if delta.finish_reason is not None:
                yield chunk({}, _finish(delta.finish_reason))
    except BaseException as exc:  # noqa: BLE001 - reported in-band: the status line is already sent
        if isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
            raise
        yield _sse(_from_exception(exc).body())
        return
    if usage:
        yield _sse(
            {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": state.model_name,
                "choices": [],
                "usage": counts,
            }
        )
    yield b"data: [DONE]\n\n"


async def _text_events(state: _State, request: Any, cancel: threading.Event, rid: str) -> AsyncIterator[bytes]:
    created = int(time.time())

    def chunk(text: str, finish: str | None = None) -> bytes:
        return _sse(
            {
                "id": rid,
                "object": "text_completion",
                "created": created,
                "model": state.model_name,
                "choices": [{"index": 0, "text": text, "finish_reason": finish, "logprobs": None}],
            }
        )

    try:
        async for delta in _deltas(state, lambda: state.module.generate_stream(request, cancel), cancel):
            if delta.finish_reason == "cancelled":
                raise _cancelled(state)
            if delta.text or delta.finish_reason is not None:
                yield chunk(delta.text, _finish(delta.finish_reason) if delta.finish_reason else None)
    except BaseException as exc:  # noqa: BLE001 - reported in-band
        if isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
            raise
        yield _sse(_from_exception(exc).body())
        return
    yield b"data: [DONE]\n\n"


# -- body size limit ------------------------------------------------------------------------------


class _BodyLimit:
    """ASGI middleware: 413 for a body over ``max_bytes`` (by Content-Length or as it streams in)."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_big = HTTPError(413, f"request body over the limit of {self.max_bytes} bytes", code="request_too_large")
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    if int(value) > self.max_bytes:
                        await _send_error(send, too_big)
                        return
                except ValueError:
                    await _send_error(send, HTTPError(400, "invalid Content-Length header"))
                    return
        # Read the whole body first (at most max_bytes), so that a chunked upload over the limit
        # is a clean 413 before the app sees anything; then replay it to the app.
        chunks: list[bytes] = []
        seen = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client left while uploading
                return
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_bytes:
                await _send_error(send, too_big)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        if scope.get("method") == "POST" and str(scope.get("path", "")).endswith("/completions"):
            problem = _body_problem(scope, b"".join(chunks))
            if problem is not None:
                await _send_error(send, problem)
                return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()  # afterwards: http.disconnect, which stops a stream

        await self.app(scope, replay, send)


def _body_problem(scope: Any, body: bytes) -> HTTPError | None:
    """The 400 for a POST body that is not JSON (wrong Content-Type, empty, malformed), else None.

    Checked before FastAPI reads the body, so the message says what is wrong in
    words (pydantic's would be "Input should be a valid dictionary" or a byte offset).
    """
    content_type = ""
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            content_type = value.decode("latin-1")
    media = content_type.split(";", 1)[0].strip().lower()
    if not media:
        return HTTPError(400, "Content-Type must be application/json; the request sent none")
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        return HTTPError(400, f"Content-Type must be application/json, got {media!r}")
    if not body.strip():
        return HTTPError(400, "request body is empty; expected a JSON object")
    try:
        value = json.loads(body)
    except UnicodeDecodeError:
        return HTTPError(400, "invalid JSON body: not UTF-8 text")
    except json.JSONDecodeError as exc:
        return HTTPError(400, f"invalid JSON body: {exc.msg} at line {exc.lineno} column {exc.colno}")
    except RecursionError:
        return HTTPError(400, "invalid JSON body: nested too deeply")
    if not isinstance(value, dict):
        kinds = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
        return HTTPError(400, f"the request body must be a JSON object, got {kinds.get(type(value), 'null')}")
    return None


async def _send_error(send: Any, err: HTTPError) -> None:
    body = json.dumps(err.body()).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": err.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# -- running it -------------------------------------------------------------------------------------


class ServerThread:
    """uvicorn serving an app from a background thread, on 127.0.0.1 and a free port by default.

    ::

        server = ServerThread(create_app(module)).start()
        server.url     # http://127.0.0.1:PORT
        server.stop()  # streams in flight get an error event; waits for them to end
    """

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, graceful_timeout: int = 5) -> None:
        import uvicorn

        self.app = app
        self.config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=graceful_timeout,
            access_log=False,
        )
        self.server = uvicorn.Server(self.config)
        self.thread = threading.Thread(target=self.server.run, name="prompter-server", daemon=True)
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        """``http://host:port`` (no path)."""
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> ServerThread:
        """Start serving; return once the socket accepts connections."""
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise ModuleError(f"the server did not start on {self.host}:{self.port}")
            time.sleep(0.01)
        sockets = [s for server in getattr(self.server, "servers", []) for s in server.sockets]
        if sockets:
            self.port = sockets[0].getsockname()[1]
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Refuse new requests, cancel generations in flight, and wait for their streams to end."""
        state: _State | None = getattr(self.app.state, "prompter", None)
        if state is not None:
            state.close()
            with state.lock:
                for cancel in state.cancels:
                    cancel.set()
        self.server.should_exit = True
        self.thread.join(timeout)
