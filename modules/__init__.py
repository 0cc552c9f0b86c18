"""modules: the I/O side of prompter — online APIs and local models behind one interface.

``OnlineChatModule`` talks to OpenAI-compatible chat APIs over HTTP;
``TrainableModule`` runs a local transformers model (imported lazily, so
``import modules`` never imports torch). Both are :class:`ModuleBase`
subclasses: ``.prompt(p)``, ``.share(prompt=...)``, ``m(input)``, ``m.stream(input)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from modules.base import AssistantMessage, ChatStream, Completion, ModuleBase, StreamDelta, ToolCall
from modules.errors import (
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    ContextLengthError,
    CrossOriginRedirectError,
    InternalServerError,
    MissingExtraError,
    ModelNotStartedError,
    ModuleConfigError,
    ModuleError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerStoppedError,
    StreamError,
    StreamInterruptedError,
    StreamTimeoutError,
    UnprocessableEntityError,
    UnsafeTokenizationError,
)
from modules.errors import missing_extra as _missing_extra
from prompter import __all__ as _PROMPTER_NAMES
from prompter import __version__ as __version__  # one version for both packages of the distribution

if TYPE_CHECKING:  # pragma: no cover
    from modules.local.tiny_model import build_tiny_model, cached_tiny_model
    from modules.local.trainable import TrainableModule
    from modules.online.aio import AsyncChatStream
    from modules.online.module import OnlineChatModule
    from modules.online.response import OnlineChatStream, Response
    from modules.online.retry import RetryPolicy

__all__ = [
    "APIConnectionError",
    "APIError",
    "APIResponseValidationError",
    "APIStatusError",
    "APITimeoutError",
    "AssistantMessage",
    "AsyncChatStream",
    "AuthenticationError",
    "BadRequestError",
    "ChatStream",
    "Completion",
    "ConflictError",
    "CrossOriginRedirectError",
    "ContextLengthError",
    "InternalServerError",
    "MissingExtraError",
    "ModelNotStartedError",
    "ModuleBase",
    "ModuleConfigError",
    "ModuleError",
    "NotFoundError",
    "OnlineChatModule",
    "OnlineChatStream",
    "PermissionDeniedError",
    "RateLimitError",
    "Response",
    "RetryPolicy",
    "ServerStoppedError",
    "StreamDelta",
    "StreamError",
    "StreamInterruptedError",
    "StreamTimeoutError",
    "ToolCall",
    "TrainableModule",
    "UnprocessableEntityError",
    "UnsafeTokenizationError",
    "build_tiny_model",
    "cached_tiny_model",
]


def _installed(package: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a module hidden as None, or one whose spec is unreadable
        return False


# Without the 'online' extra a star import takes the rest; the name itself still says which extra to install
# (see __getattr__). Not for a type checker, which reads `__all__.remove` as always run and would then refuse
# `from prompter.modules import OnlineChatModule`.
if not TYPE_CHECKING and not _installed("requests"):
    __all__.remove("OnlineChatModule")

_LAZY = {
    "OnlineChatModule": "modules.online.module",
    "TrainableModule": "modules.local.trainable",
    # what respond()/arespond() return, and OnlineChatModule's retry=: neither needs the 'online' extra
    "Response": "modules.online.response",
    # what stream() and astream() return, for annotations: neither needs the 'online' extra either
    "OnlineChatStream": "modules.online.response",
    "AsyncChatStream": "modules.online.aio",
    "RetryPolicy": "modules.online.retry",
    # the tiny local model of the docs, demo and tests: reached through prompter.modules beside an app's own
    # `modules` package, where the deep import `modules.local.tiny_model` finds the app's
    "build_tiny_model": "modules.local.tiny_model",
    "cached_tiny_model": "modules.local.tiny_model",
}


def __getattr__(name: str) -> Any:
    # Lazy so that `import modules` imports neither requests nor torch.
    if name in _LAZY:
        import importlib

        try:
            module = importlib.import_module(_LAZY[name])
        except ModuleNotFoundError as exc:
            missing = _missing_extra(exc, name)  # the extra that package comes with, or exc itself
            if missing is exc:
                raise
            raise missing from exc
        value = getattr(module, name)
        globals()[name] = value
        return value
    if name in _PROMPTER_NAMES:
        # ImportError, not AttributeError: `from modules import X` would replace an AttributeError's message
        raise ImportError(f"{name} is not in the I/O package: from prompter import {name}", name="modules")
    raise AttributeError(f"module 'modules' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
