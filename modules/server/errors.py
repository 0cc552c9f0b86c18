"""OpenAI's error envelope, and the map from what a module raises to an HTTP status.

Every error the server answers is ``{"error": {"message", "type", "param", "code"}}``;
its message is capped in length and never carries a traceback.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from modules.errors import ContextLengthError, ModuleError, ServerStoppedError

__all__ = ["HTTPError", "cancelled_error", "from_exception"]

logger = logging.getLogger("modules.server.app")

_MAX_MESSAGE_CHARS = 1000


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
        """The ``{"error": {...}}`` body, its message and param capped in length."""
        message, param = _capped(self.message), _capped(self.param)
        return {"error": {"message": message, "type": self.type, "param": param, "code": self.code}}


def _capped(text: str | None) -> str | None:
    """*text* cut to :data:`_MAX_MESSAGE_CHARS`: a ``param`` names a client's key, which may be a megabyte long."""
    return text if text is None or len(text) <= _MAX_MESSAGE_CHARS else text[:_MAX_MESSAGE_CHARS] + "..."


def from_exception(exc: BaseException, input_param: str = "messages") -> HTTPError:
    """Map what the module raised to an HTTP error; unknown failures become a bare 500.

    *input_param* is the field a context overflow names: ``messages`` for chat,
    ``prompt`` for ``/v1/completions``.
    """
    if isinstance(exc, HTTPError):
        return exc
    if isinstance(exc, ContextLengthError):
        return HTTPError(400, _context_message(exc, input_param), param=input_param, code="context_length_exceeded")
    if isinstance(exc, ServerStoppedError):
        return HTTPError(503, str(exc), type="server_error", code="server_shutting_down")
    if isinstance(exc, (ModuleError, ValueError, TypeError, KeyError, LookupError)):
        message = str(exc) or type(exc).__name__
        located = _LOCATED.match(message)  # the module's message checks name the message at fault first
        return HTTPError(400, message, param=located.group(1) if located else None)
    try:
        import jinja2

        if isinstance(exc, jinja2.TemplateError):
            return HTTPError(400, f"the model's chat template rejected the conversation: {exc}")
    except ImportError:  # pragma: no cover
        pass
    logger.error("request failed", exc_info=exc)
    return HTTPError(500, "internal server error", type="server_error")


def _context_message(exc: ContextLengthError, input_param: str) -> str:
    """A context overflow said in the request's own words: ``max_tokens`` and *input_param*, never the
    Python API's ``max_new_tokens`` or ``trim="oldest"``, which no HTTP client can pass."""
    prompt, new, context = exc.prompt_tokens, exc.max_new_tokens, exc.max_context
    if not new:  # scoring: the prompt alone
        return f"the prompt is {prompt} tokens, but the model's context is {context} tokens; shorten the {input_param}"
    said = (
        f"the prompt is {prompt} tokens and max_tokens is {new} ({prompt + new} in all), "
        f"but the model's context is {context} tokens; "
    )
    if new >= context:
        return said + f"max_tokens alone fills the context: send a max_tokens below {context}"
    if prompt < context:
        return said + f"shorten the {input_param} or lower max_tokens (at most {context - prompt} fit after it)"
    return said + f"shorten the {input_param}"


_LOCATED = re.compile(r"(messages\[\d+\](?:\.[A-Za-z_]\w*|\[\d+\])*): ")
"""The place a message check names at the start of its error (``messages[2].tool_calls[0]: ...``): its ``param``."""


def cancelled_error(state: Any) -> HTTPError:
    if state.closing:
        return HTTPError(
            503,
            "the server stopped before this answer was complete",
            type="server_error",
            code="server_shutting_down",
        )
    return HTTPError(499, "the request was cancelled", type="server_error", code="cancelled")
