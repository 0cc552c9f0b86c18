"""The exceptions modules raise: configuration mistakes and failed model calls.

The API tree mirrors the official ``openai`` client's, so code written
against one reads naturally against the other::

    ModuleError(Exception)
    ├── ModuleConfigError(ModuleError, ValueError)   bad arguments, unknown source, no API key
    ├── APIError                                      a call to a model API failed
    │   ├── APIConnectionError                        could not connect / connection dropped
    │   │   └── APITimeoutError(.., TimeoutError)     connect/read timeout or total deadline
    │   ├── APIResponseValidationError                a 2xx answer that is not valid JSON/SSE
    │   ├── StreamInterruptedError                    a stream ended before it was complete
    │   ├── StreamError                               the server sent an error event mid-stream
    │   └── APIStatusError                            a non-2xx answer (status_code, request_id, body)
    │       ├── BadRequestError                 400
    │       ├── AuthenticationError             401
    │       ├── PermissionDeniedError           403
    │       ├── NotFoundError                   404
    │       ├── ConflictError                   409
    │       ├── UnprocessableEntityError        422
    │       ├── RateLimitError                  429
    │       ├── CrossOriginRedirectError        a redirect the module does not follow
    │       └── InternalServerError             >= 500

Messages never contain an API key: they are built from the status, the
server's error message and the request id only, never from a URL or a header,
and they are raised ``from None`` when the underlying exception's text could
carry one (see :mod:`modules.online.module`).

Other engineers add classes at the end of this file (e.g. a context-length
error for local models); keep the base classes above stable.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "APIConnectionError",
    "APIError",
    "APIResponseValidationError",
    "APIStatusError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "CrossOriginRedirectError",
    "InternalServerError",
    "ModuleConfigError",
    "ModuleError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "StreamError",
    "StreamInterruptedError",
    "UnprocessableEntityError",
    "status_error_class",
]


class ModuleError(Exception):
    """Base class of every error a module raises.

    Every one pickles and unpickles as itself, with its message and attributes
    (``status_code``, ``partial_text``...), so an error raised in a worker process
    reaches the parent as raised. Python's default rebuilds an error by calling
    its class with ``args`` alone, which fails for the keyword-only fields here.
    """

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (type(self), self.args), self.__dict__ or None)


def _rebuilt(cls: type[ModuleError], args: tuple[Any, ...]) -> ModuleError:
    """*cls*'s error with *args*, without its ``__init__`` (pickle then restores its attributes)."""
    error = cls.__new__(cls, *args)
    error.args = args
    return error


class ModuleConfigError(ModuleError, ValueError):
    """A module was configured wrongly: unknown source, missing key or URL, bad option.

    The message names the argument at fault and the remedy, e.g.
    ``no API key for source 'deepseek': pass api_key=... or set DEEPSEEK_API_KEY``.
    """


class APIError(ModuleError):
    """A call to a model API failed. ``message`` is the human-readable reason."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class APIConnectionError(APIError):
    """The server could not be reached, or the connection dropped before an answer."""

    def __init__(self, message: str = "Connection error.") -> None:
        super().__init__(message)


class APITimeoutError(APIConnectionError, TimeoutError):
    """A connect or read timeout, or the module's total deadline, ran out."""

    def __init__(self, message: str = "Request timed out.") -> None:
        super().__init__(message)


class APIResponseValidationError(APIError):
    """The server answered 2xx with something that is not the expected JSON or SSE."""


class StreamError(APIError):
    """The server reported an error inside a stream (``event: error`` or ``data: {"error": ...}``).

    ``body`` is the error object the server sent; ``partial_text`` the text
    received before it.
    """

    def __init__(self, message: str, *, body: Any = None, partial_text: str = "") -> None:
        super().__init__(message)
        self.body = body
        self.partial_text = partial_text


class StreamInterruptedError(APIError):
    """A stream ended (connection closed, timeout) before ``[DONE]`` or a finish reason.

    ``partial_text`` holds everything received so far, so a caller can keep it
    or show it; the module never retries once any byte reached the caller.
    """

    def __init__(self, message: str, *, partial_text: str = "") -> None:
        super().__init__(message)
        self.partial_text = partial_text


class APIStatusError(APIError):
    """The server answered with a non-2xx status.

    Attributes: ``status_code`` (int), ``request_id`` (the ``x-request-id``
    response header, or None) and ``body`` (the decoded JSON error body, the
    raw text, or None).
    """

    def __init__(self, message: str, *, status_code: int, request_id: str | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.request_id = request_id
        self.body = body

    def __str__(self) -> str:
        rid = f" (request id: {self.request_id})" if self.request_id else ""
        return f"Error code: {self.status_code} - {self.message}{rid}"


class BadRequestError(APIStatusError):
    """400: the request was malformed (bad parameter, bad model name for some providers)."""


class AuthenticationError(APIStatusError):
    """401: the API key is missing, wrong or expired."""


class PermissionDeniedError(APIStatusError):
    """403: the key is valid but may not use this model or endpoint."""


class NotFoundError(APIStatusError):
    """404: wrong base_url path or unknown model."""


class ConflictError(APIStatusError):
    """409: a conflicting concurrent request (retried by default)."""


class UnprocessableEntityError(APIStatusError):
    """422: the body was well-formed JSON but semantically invalid."""


class RateLimitError(APIStatusError):
    """429: too many requests or tokens; retried honouring ``Retry-After``."""


class InternalServerError(APIStatusError):
    """5xx: the provider failed (retried by default)."""


_STATUS_CLASSES: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


def status_error_class(status_code: int) -> type[APIStatusError]:
    """The most specific :class:`APIStatusError` subclass for an HTTP status."""
    if status_code >= 500:
        return InternalServerError
    return _STATUS_CLASSES.get(status_code, APIStatusError)


# -- local models (TrainableModule, the OpenAI-compatible server) -------------------------------
#
#   ModuleError
#   ├── ModelNotStartedError(ModuleError, RuntimeError)    a local model used before start()
#   ├── ContextLengthError(ModuleError, ValueError)        prompt + max_new_tokens > the context
#   ├── UnsafeTokenizationError(ModuleError, ValueError)   user text could not be kept out of markup
#   └── ServerStoppedError(ModuleError, RuntimeError)      a generation cut short by stop()


class ModelNotStartedError(ModuleError, RuntimeError):
    """A local model was called before ``start()`` loaded it (or after ``stop()``)."""


class ContextLengthError(ModuleError, ValueError):
    """The conversation plus the requested new tokens does not fit the model's context.

    ``prompt_tokens``, ``max_new_tokens`` and ``max_context`` are the numbers
    at fault; ``code`` is OpenAI's ``"context_length_exceeded"``. Pass
    ``trim="oldest"`` to drop whole oldest turns instead, or shorten the input.
    """

    code = "context_length_exceeded"

    def __init__(self, prompt_tokens: int, max_new_tokens: int, max_context: int, remedy: str = "") -> None:
        self.prompt_tokens = prompt_tokens
        self.max_new_tokens = max_new_tokens
        self.max_context = max_context
        total = prompt_tokens + max_new_tokens
        message = (
            f"the prompt is {prompt_tokens} tokens and max_new_tokens is {max_new_tokens} "
            f"({total} in all), but the model's context is {max_context} tokens"
        )
        super().__init__(message + (f"; {remedy}" if remedy else ""))


class UnsafeTokenizationError(ModuleError, ValueError):
    """User-supplied text could not be located in the rendered prompt.

    Raised instead of tokenizing it as markup, where a typed control token
    (``<|im_start|>``...) would become a real one.
    """


class ServerStoppedError(ModuleError, RuntimeError):
    """A generation was cut short because the module or its server was stopped."""


__all__ += ["ContextLengthError", "ModelNotStartedError", "ServerStoppedError", "UnsafeTokenizationError"]


class StreamTimeoutError(APITimeoutError, StreamInterruptedError):
    """A stream ran past the total deadline: both a timeout and an interrupted stream (``partial_text``)."""

    def __init__(self, message: str, *, partial_text: str = "") -> None:
        APITimeoutError.__init__(self, message)
        self.partial_text = partial_text


__all__ += ["StreamTimeoutError"]


class MissingExtraError(ModuleConfigError, ImportError):
    """A module needs an optional dependency that is not installed; the message names the extra to install."""


__all__ += ["MissingExtraError"]

_EXTRA_OF_PACKAGE = {
    "fastapi": "server", "starlette": "server", "uvicorn": "server", "h11": "server",
    "requests": "online", "urllib3": "online",
    "torch": "local", "transformers": "local", "tokenizers": "local", "safetensors": "local",
}  # fmt: skip


def missing_extra(exc: ModuleNotFoundError, what: str) -> BaseException:
    """A :class:`MissingExtraError` naming the extra to install for *what*, when *exc* is one of an extra's
    packages missing; else *exc* itself (a missing module that is no extra's is a bug, said as it is)."""
    extra = _EXTRA_OF_PACKAGE.get((exc.name or "").partition(".")[0])
    if extra is None:
        return exc
    return MissingExtraError(f"{what} needs the {extra!r} extra ({exc.name} is not installed): "
                             f"pip install 'prompter-kit[{extra}]'")  # fmt: skip


class CrossOriginRedirectError(APIStatusError):
    """The server answered with a redirect the module does not follow (another origin, a method
    change, a loop). ``status_code`` is the redirect's status, ``location`` where it pointed (without
    its query string, secrets masked). Nothing was sent there."""

    def __init__(self, message: str, *, status_code: int, location: str, request_id: str | None = None) -> None:
        super().__init__(message, status_code=status_code, request_id=request_id)
        self.location = location


#: The documentation's address: pyproject.toml's ``[project.urls] Documentation``. A hint in a message
#: names a page under it (``f"{DOCS_URL}/install.md"``), which works from an installed wheel, where the
#: repository's ``docs/`` folder is not. Not exported: a constant for messages, not an API.
DOCS_URL = "https://github.com/prompter-kit/prompter/tree/main/docs"
