"""The playground's HTTP app: the page, its static files, and ``POST /api/render``.

``POST /api/render`` takes ``{"state": {field: text, ...}}`` (the URL's query parameters, see
:mod:`modules.playground.state`) and answers ``200 {"output", "kind", "segments", "marked",
"chars", "tokens"}`` or ``400 {"error": {"type", "field", "message"}}``. A body over
:data:`MAX_BODY_BYTES` is a 413, a body not sent as ``Content-Type: application/json`` a 415 (so that no other
site's page can post to it: a form or a "simple" cross-site request cannot send that type), a path or method
the playground has not a 404 or 405, all with that body; no input gets a traceback (an unexpected failure
is a 500 with a one-line ``InternalError`` body). ``GET /api/options`` lists the model families and dialects.

Listening on loopback, it answers only a ``Host`` naming loopback (localhost, 127.x, [::1]), else a 403
``HostNotAllowed``: a page whose name is pointed at 127.0.0.1 (DNS rebinding) can neither use nor read it
(``allowed_hosts`` adds names; :mod:`modules.server.host_check`).

The page is three files served from this package (no CDN, no fonts, no build step); the
Content-Security-Policy keeps it to its own origin.
"""

# no `from __future__ import annotations`: FastAPI reads the handlers' annotations (Request, imported
# inside create_playground_app so that fastapi stays optional) as objects, not as strings
import json
import logging
from collections.abc import Callable
from importlib import resources
from typing import Any, TypeVar

from modules.errors import missing_extra
from modules.playground.page import page_html
from modules.playground.render import Spans, TokenCounter, error_body, is_panic, render
from modules.playground.state import DIALECTS, FIELDS, FieldError, read_state
from prompter import ModelFormat
from prompter.errors import PromptError

T = TypeVar("T")

__all__ = ["MAX_BODY_BYTES", "create_playground_app", "mount_playground"]

MAX_BODY_BYTES = 2 * 1024 * 1024
"""The largest render request, as on the server the page is mounted on: every field at its limit of 100 000
characters fits as plain text (800 KB in all), and so do six such fields of three-byte (CJK) characters."""

_STATIC = {"playground.css": "text/css; charset=utf-8", "playground.js": "text/javascript; charset=utf-8"}
_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_log = logging.getLogger("modules.playground")


def create_playground_app(count_tokens: TokenCounter | None = None, allowed_hosts: list[str] | None = None) -> Any:
    """The playground as a FastAPI app; ``count_tokens`` (text, content spans -> token count) adds token counts,
    ``allowed_hosts`` names the Hosts it answers besides loopback (see :mod:`modules.server.host_check`)."""
    try:
        from fastapi import FastAPI, Request
        from fastapi.responses import JSONResponse, Response
        from starlette.concurrency import run_in_threadpool
        from starlette.exceptions import HTTPException
    except ModuleNotFoundError as exc:  # the 'server' extra
        raise missing_extra(exc, "create_playground_app()") from None

    from modules.server.host_check import add_host_check

    app = FastAPI(title="prompter playground", docs_url=None, redoc_url=None, openapi_url=None)

    def host_error(message: str) -> dict[str, Any]:
        return {"error": {"type": "HostNotAllowed", "field": None, "message": message}}

    add_host_check(app, allowed_hosts, host_error, _HEADERS)  # mounted on the model server: that one checked it

    def static(name: str) -> bytes:
        return resources.files("modules.playground").joinpath("static", name).read_bytes()

    def error(status: int, kind: str, message: str, field: str | None = None) -> JSONResponse:
        body = {"error": {"type": kind, "field": field, "message": message}}
        return JSONResponse(body, status_code=status, headers=_HEADERS)

    @app.exception_handler(HTTPException)
    async def routing(request: Request, exc: HTTPException) -> JSONResponse:
        """A path or method the playground has not: the same error body as every other mistake."""
        path = request.url.path[:100]
        allow = (exc.headers or {}).get("Allow")
        if exc.status_code == 405 and allow:
            response = error(405, "MethodNotAllowed", f"{request.method[:20]} is not allowed on {path!r}; use {allow}")
            response.headers["Allow"] = allow
            return response
        if exc.status_code == 404:
            return error(404, "NotFound", f"no playground page or endpoint at {path!r}; the page is at the root")
        return error(exc.status_code, "HTTPError", str(exc.detail)[:200])

    @app.get("/")
    async def page(request: Request) -> Response:
        """The playground page, with the state in the link already rendered into ``#output``."""
        template = static("index.html").decode("utf-8")
        query = request.query_params.multi_items()
        try:
            html = await run_in_threadpool(lambda: _no_local_files(page_html, template, query, count_tokens))
        except Exception:  # the script renders it again and says what is wrong; the page itself must load
            _log.exception("playground page render failed")
            html = template
        return Response(html, media_type="text/html; charset=utf-8", headers=_HEADERS)

    @app.get("/static/{name}")
    async def asset(name: str) -> Response:
        """The page's stylesheet and script (only those two names)."""
        if name not in _STATIC:
            return error(404, "NotFound", f"no static file {name[:60]!r}")
        return Response(static(name), media_type=_STATIC[name], headers=_HEADERS)

    @app.get("/api/options")
    async def options() -> Response:
        """The fields, the registered model families and the API dialects, for the page's pickers."""
        body = {
            "fields": list(FIELDS),
            "families": list(ModelFormat.families()),
            "dialects": list(DIALECTS),
            "tokens": count_tokens is not None,
        }
        return JSONResponse(body, headers=_HEADERS)

    @app.post("/api/render")
    async def render_endpoint(request: Request) -> Response:
        """Render one state through the real prompter."""
        wrong_type = _content_type_problem(request.headers.getlist("content-type"))
        if wrong_type:
            return error(415, "UnsupportedMediaType", wrong_type)
        raw = await _read_body(request)
        if raw is None:
            return error(413, "RequestTooLarge", f"request body over the limit of {MAX_BODY_BYTES} bytes")
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            return error(400, "InvalidJSON", 'expected a JSON body {"state": {...}}')
        state = body.get("state") if isinstance(body, dict) else None
        if not isinstance(state, dict):
            return error(400, "InvalidRequest", 'expected a JSON body {"state": {field: text, ...}}', "state")
        try:
            result = await run_in_threadpool(lambda: _no_local_files(lambda: render(read_state(state), count_tokens)))
        except (PromptError, FieldError) as exc:
            return JSONResponse(error_body(exc), status_code=400, headers=_HEADERS)
        except RecursionError:
            return error(400, "InputTooDeep", "the input nests too deeply to render", "input")
        except Exception:  # a bug of ours: logged here, one line to the client, never a traceback
            _log.exception("playground render failed")
            return error(500, "InternalError", "the playground could not render this state; please report it")
        except BaseException as exc:  # a Rust panic (pyo3's PanicException) is no Exception, and no traceback either
            if not is_panic(exc):
                raise
            _log.error("playground render panicked: %s", str(exc)[:200])
            return error(500, "InternalError", "the playground could not render this state; please report it")
        return JSONResponse(result, headers=_HEADERS)

    async def _read_body(request: Request) -> bytes | None:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            return None
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                return None
            chunks.append(chunk)
        return b"".join(chunks)

    return app


def _content_type_problem(said: list[str]) -> str | None:
    """Why a render request's Content-Type is refused, or None for ``application/json``: a page on another
    site may post ``text/plain`` or a form without asking (no CORS preflight), but not JSON."""
    media = {value.split(";", 1)[0].strip().lower() for value in said}
    if media == {"application/json"}:
        return None
    got = f"got {', '.join(sorted(repr(m[:60]) for m in media))}" if media else "the request sent none"
    return f"Content-Type must be application/json ({got}); send the state as JSON with that header, as the page does"


def _no_local_files(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` with local media paths refused: the states come from HTTP clients, who must never
    make the server read its own files and hand them back as base64 (``file:///...png`` in a history)."""
    from prompter.render.media import local_files

    with local_files(False):
        return function(*args)


def mount_playground(app: Any, module: Any = None) -> None:
    """Mount the playground at ``/playground`` on ``app``, counting tokens with ``module``'s tokenizer if it has one."""
    app.mount("/playground", create_playground_app(_token_counter(module)))


def _token_counter(module: Any) -> TokenCounter | None:
    """Counts with the module's tokenizer (loaded only when the first count is asked for) as the module
    encodes a prompt: text in the content spans as text, so a special token typed there is not one id."""
    if module is None or not hasattr(type(module), "tokenizer"):
        return None

    def count(text: str, spans: Spans) -> int:
        tokenizer = module.tokenizer
        if spans:
            from modules.local.safe_tokens import encode_with_spans

            return len(encode_with_spans(tokenizer, text, spans))
        return len(tokenizer.encode(text, add_special_tokens=False))

    return count
