"""An OpenAI-compatible HTTP server over a local module (FastAPI + uvicorn in a thread).

``TrainableModule(path).start(serve=True)`` runs it; ``module.url`` is the base
URL to give any OpenAI client::

    import openai
    m = TrainableModule(path).start(serve=True)
    client = openai.OpenAI(base_url=m.url, api_key="unused")
    client.chat.completions.create(model=m.name, messages=[{"role": "user", "content": "hi"}])
    m.stop()

Endpoints: ``POST /v1/chat/completions`` (stream or not, tools),
``POST /v1/completions`` (also scoring: ``echo`` + ``logprobs`` + ``max_tokens: 0``,
:mod:`modules.server.scoring`), ``GET /v1/models``, ``GET /v1/models/{id}``,
``GET /health`` (each GET path answers HEAD too); the schema is at ``/openapi.json``.

What the server promises:

* every error is OpenAI's envelope ``{"error": {"message", "type", "param",
  "code"}}`` with the matching status: 400 invalid request (and
  ``code="context_length_exceeded"``), 404 unknown model or path, 405, 408 a body that stalls
  (:data:`~modules.server.body_limit.BODY_READ_TIMEOUT_S`), 413 body
  over ``max_body_bytes`` (2 MB), 415 a compressed body, 429 over ``max_concurrency`` requests in
  flight (with ``Retry-After``), 503 while stopping; HTTP that cannot be parsed gets a 400 (431 for a
  header block too large) in the same envelope (:mod:`modules.server.protocol`). Messages are capped in
  length and never carry a traceback;
* listening on loopback (127.0.0.1, ::1, localhost), it answers only a ``Host`` naming loopback, else a 403
  ``host_not_allowed``: a web page whose name is pointed at 127.0.0.1 (DNS rebinding) cannot drive or read it
  (``allowed_hosts`` adds names, :mod:`modules.server.host_check`);
* user text is tokenized as data (see :func:`modules.local.trainable.encode_with_spans`);
* requests never mix: the module serialises generation (or batches it, with
  ``TrainableModule(max_batch_size=N)``);
* a client that disconnects, mid-stream or while waiting for a plain answer,
  stops its generation at the next token (its scoring at the next prompt);
* a small request renders on the event loop only with a template prompter ships; a model
  folder's own template renders in a thread, so a slow one never holds other clients;
* ``stop()`` ends streams in flight with an error event and plain requests
  with a 503, never a silent cut; so does SIGTERM (see :mod:`modules.server.signals`);
* no client input gets a 5xx: bodies are strict JSON with strict types, nested
  at most 64 levels, under the limits of :mod:`modules.server.limits` (stop
  strings, messages, tools, ``max_tokens``), else a 400; an option the server
  cannot honour is refused by name, never ignored.

The served object is duck-typed (see :class:`ServableModule`); ``TrainableModule`` is one.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any, Protocol

from fastapi import Request

from modules.base import Completion, StreamDelta
from modules.errors import ModuleConfigError
from modules.server.body_limit import MAX_BODY_BYTES, SMALL, BodyLimit, ParsedOnceRoute
from modules.server.errors import HTTPError, cancelled_error, from_exception
from modules.server.host_check import add_host_check
from modules.server.lifecycle import ServerState, ServerThread
from modules.server.schema import ChatCompletionRequest, CompletionRequest
from modules.server.scoring import is_scoring, score_response, scoring_problem
from modules.server.sse import chat_events, text_events
from modules.server.tool_calls import check_tool_replies
from modules.server.validation import (
    describe_invalid,
    finish_reason,
    generation_options,
    message_dict,
    refuse_unsupported,
)

__all__ = ["MAX_BODY_BYTES", "ServableModule", "ServerThread", "create_app"]


class ServableModule(Protocol):
    """What the server needs from a module (``TrainableModule`` provides it).

    ``generate_stream`` may take a third argument, ``usage``: a dict it fills with the token counts
    for ``stream_options.include_usage``; the server passes it only to a module whose method takes it.
    """

    name: str

    def prepare(self, messages: Any, tools: Any = None, **generation: Any) -> Any: ...
    def prepare_text(self, prompt: str, **generation: Any) -> Any: ...
    def generate(self, request: Any, cancel: threading.Event | None = None) -> Completion: ...
    def generate_stream(self, request: Any, cancel: threading.Event | None = None) -> Iterator[StreamDelta]: ...


def create_app(
    module: Any,
    *,
    model_name: str | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    max_concurrency: int = 128,
    allowed_hosts: list[str] | None = None,
) -> Any:
    """A FastAPI app serving *module* under OpenAI's paths.

    ``model_name`` is the id clients must send (default ``module.name``);
    requests naming another model get 404 ``model_not_found``. ``allowed_hosts``: see :mod:`~.host_check`.
    """
    from fastapi import FastAPI
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, StreamingResponse
    from fastapi.routing import APIRoute
    from starlette.exceptions import HTTPException as StarletteHTTPException

    class _AsciiJSON(JSONResponse):
        def render(self, content: Any) -> bytes:
            return json.dumps(content).encode("ascii")

    class _AdmittedStream(StreamingResponse):
        """A stream that gives its request's slot back however it ends: its events give it back when
        they end, but a client that hangs up while the response start waits to be written (it stopped
        reading) gets the response cancelled before its events ever ran."""

        def __init__(self, events: Any, cancel: threading.Event) -> None:
            super().__init__(events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
            self.cancel = cancel

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            try:
                await super().__call__(scope, receive, send)
            finally:
                self.cancel.set()  # nobody reads what is left of it
                state.release(self.cancel)

    for option, value, least in (("max_concurrency", max_concurrency, 1), ("max_body_bytes", max_body_bytes, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ModuleConfigError(f"{option}: expected an int >= {least}, got {value!r}")
    state = ServerState(module=module, model_name=_served_name(module, model_name), max_concurrency=max_concurrency)
    app = FastAPI(title="prompter local model server", version="1", docs_url=None, redoc_url=None)
    app.router.route_class = ParsedOnceRoute  # the body's JSON is parsed once, strictly, by BodyLimit
    app.state.prompter = state
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes, closing=lambda: state.closing)
    add_host_check(app, allowed_hosts)  # outermost: a Host it must not answer is refused before anything else

    def error_response(err: HTTPError) -> JSONResponse:
        # ASCII JSON: a message quoting client text with a lone surrogate must still encode.
        return _AsciiJSON(err.body(), status_code=err.status, headers=err.headers)

    @app.exception_handler(HTTPError)
    async def _http_error(request: Request, exc: HTTPError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        message, param = describe_invalid(exc.errors())
        return error_response(HTTPError(400, message, param=param))

    @app.exception_handler(StarletteHTTPException)
    async def _starlette(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
        headers = dict(exc.headers or {})
        if headers.get("Allow") == "GET":  # the HEAD twin of each GET route (below) is a route of its own
            headers["Allow"] = "GET, HEAD"
        message = _routing_message(request, exc, headers.get("Allow"))
        return error_response(HTTPError(exc.status_code, message, type=kind, headers=headers))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        return error_response(from_exception(exc))

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
        refuse_unsupported(body, chat=True)
        messages = [message_dict(m, i) for i, m in enumerate(body.messages)]
        check_tool_replies(messages)
        offer_tools = body.tools and body.tool_choice != "none"
        tools = [t.model_dump(exclude_none=True) for t in body.tools] if offer_tools and body.tools else None
        options = generation_options(body, chat=True)
        cancel = state.admit()
        try:
            inline = tools is None and _renders_quickly(module)  # tools: their layout is derived per tool set
            request = await _off_loop_if_large(http, inline, module.prepare, messages, tools, **options)
        except BaseException as exc:
            state.release(cancel)
            raise from_exception(exc) from None
        rid = "chatcmpl-" + uuid.uuid4().hex
        if body.stream:
            usage = bool(body.stream_options and body.stream_options.include_usage)
            return _AdmittedStream(chat_events(state, request, cancel, rid, usage), cancel)
        done = await _generate(state, request, cancel, http)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": done.text if not done.tool_calls else (done.text or None),
        }
        if done.tool_calls:
            message["tool_calls"] = [dict(c) for c in done.tool_calls]
        # a Response goes out as is; a dict would be walked again (jsonable_encoder) for the same bytes
        return JSONResponse({
            "id": rid,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": state.model_name,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish_reason(done.finish_reason), "logprobs": None}
            ],
            "usage": dict(done.usage or {}),
        })

    @app.post("/v1/completions", response_model=None)
    async def completions(body: CompletionRequest, http: Request) -> Any:
        """OpenAI (legacy) text completions: the prompt is plain text, never control tokens."""
        check_model(body.model)
        if is_scoring(body):  # echo + logprobs + max_tokens=0: the prompt's token logprobs, no generation
            return await score_response(state, body, http)
        if body.max_tokens == 0:
            scoring_problem(body)  # echo=true with a logprobs it cannot score: name logprobs, not max_tokens
            raise HTTPError(400, "max_tokens: 0 only scores the prompt (echo=true, logprobs)", param="max_tokens")
        refuse_unsupported(body, chat=False)
        prompt = body.prompt
        if isinstance(prompt, list):
            if len(prompt) != 1:
                raise HTTPError(400, "prompt: this server takes one prompt per request", param="prompt")
            prompt = prompt[0]
        options = generation_options(body, chat=False)
        cancel = state.admit()
        try:
            request = await _off_loop_if_large(http, True, module.prepare_text, prompt, **options)
        except BaseException as exc:
            state.release(cancel)
            raise from_exception(exc, input_param="prompt") from None
        rid = "cmpl-" + uuid.uuid4().hex
        if body.stream:
            usage = bool(body.stream_options and body.stream_options.include_usage)
            return _AdmittedStream(text_events(state, request, cancel, rid, usage), cancel)
        done = await _generate(state, request, cancel, http)
        return JSONResponse({
            "id": rid,
            "object": "text_completion",
            "created": int(time.time()),
            "model": state.model_name,
            "choices": [
                {"index": 0, "text": done.text, "finish_reason": finish_reason(done.finish_reason), "logprobs": None}
            ],
            "usage": dict(done.usage or {}),
        })

    for get in [r for r in app.router.routes if isinstance(r, APIRoute) and "GET" in (r.methods or ())]:
        # HEAD wherever GET (RFC 9110): the same handler, its body dropped by the server; out of the schema,
        # where it would repeat the GET operation's id
        app.add_api_route(get.path, get.endpoint, methods=["HEAD"], include_in_schema=False)

    from modules.playground import mount_playground  # the page at /playground (modules/playground)

    mount_playground(app, module)
    return app


def _served_name(module: Any, model_name: Any) -> str:
    """The model id clients must send: *model_name*, else ``module.name``, as its exact text (a str
    subclass's own ``__eq__`` would otherwise decide which ids the server answers)."""
    name = module.name if model_name is None else model_name
    if not issubclass(type(name), str) or not str.__len__(name):
        what = "model_name" if model_name is not None else "the module's name"
        got = "an empty str" if issubclass(type(name), str) else type(name).__name__
        raise ModuleConfigError(f"{what}: expected a non-empty str, got {got}; pass model_name='the id clients send'")
    return str.__str__(name)


_ROUTES = "POST /v1/chat/completions, POST /v1/completions, GET /v1/models, GET /health"


def _routing_message(request: Any, exc: Any, allow: str | None) -> str:
    """Starlette's bare "Not Found" / "Method Not Allowed", said with the method and path at fault."""
    detail = str(exc.detail)
    where = f"{request.method[:20]} {request.url.path[:200]}"
    if exc.status_code == 405 and detail == "Method Not Allowed" and allow:
        return f"the method is not allowed ({where}); this path takes {allow}"
    if exc.status_code == 404 and detail == "Not Found":
        return f"no such path ({where}); this server serves {_ROUTES}"
    return detail


async def _generate(state: ServerState, request: Any, cancel: threading.Event, http: Any) -> Completion:
    """Run one generation in the server's pool; a client that hangs up cancels it."""
    loop = asyncio.get_running_loop()

    async def watch(future: asyncio.Future[Any]) -> None:
        # The ASGI receive, once the body is in, returns only when the client has gone: one wait per
        # request instead of polling is_disconnected() every 50 ms (at 64 clients a tenth of the
        # server's time). Cancelled as soon as the answer is ready.
        while not future.done():
            message = await http.receive()
            if message.get("type") == "http.disconnect":
                cancel.set()  # nobody will read the answer: free the model at the next token
                return

    try:
        # Our own pool, one thread per admitted request: waiting for the model (the lock or a
        # batch) must not use up the small shared pool that prepare() and the app need.
        # An engine that wakes the loop itself (the transformers engine, in process or in its
        # process) needs no thread per waiting request: one hand-off fewer for every answer.
        generate_async = getattr(state.module, "generate_async", None)
        if generate_async is not None:
            future: asyncio.Future[Any] = asyncio.ensure_future(generate_async(request, cancel))
        else:
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
            raise cancelled_error(state) from None
        raise from_exception(exc) from None
    except BaseException as exc:
        raise from_exception(exc) from None
    finally:
        state.release(cancel)
    if done.finish_reason == "cancelled":
        raise cancelled_error(state)
    return done


async def _off_loop_if_large(http: Any, inline: bool, prepare: Any, *args: Any, **kwargs: Any) -> Any:
    """``prepare(*args, **kwargs)`` (render and tokenize a request, local files refused) right here for
    a small body whose rendering is known to be quick (*inline*), else in a worker thread (a large body:
    :data:`~modules.server.body_limit.INLINE_BYTES`): for a short chat the thread's handoff cost more
    than the work (about 0.1 ms)."""
    if inline and http.scope.get(SMALL):
        return _without_local_files(prepare, *args, **kwargs)
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(lambda: _without_local_files(prepare, *args, **kwargs))


def _renders_quickly(module: Any) -> bool:
    """Whether a small chat request may render on the event loop: only with a chat template prompter ships
    (reviewed, quick at any size a small body holds) and no trimming. A model folder's own template may run
    its whole time budget (1 s) per render, ``trim="oldest"`` renders again per dropped turn (18 s for a
    62 KB body of short turns): on the loop, every other client (even ``/health``) would wait as long.
    A request with tools renders off the loop whatever the template: each new tool set has its layout
    derived, some 200 renders (1.5 s for 128 one-line tools in a 16 KB body)."""
    from prompter.formats.model_format import ModelFormat
    from prompter.formats.registry import shipped_sources

    try:
        fmt, trim = getattr(module, "model_format", None), getattr(module, "trim", None)
    except Exception:  # noqa: BLE001 - unknown: rendered off the loop, where its own error is reported
        return False
    if type(fmt) is not ModelFormat or trim is not None:  # no format, or a subclass rendering its own way
        return False
    return all(source is None or source in shipped_sources() for source in (fmt.chat_template, fmt.tool_chat_template))


def _without_local_files(prepare: Any, *args: Any, **kwargs: Any) -> Any:
    """Render a client's request with local media paths refused: a path in an HTTP request names a file
    on the server's disk, which a client must never get read into a prompt."""
    from prompter.render.media import local_files

    with local_files(False):
        return prepare(*args, **kwargs)
