"""The online side: ``OnlineChatModule`` over HTTP to hosted chat APIs.

- ``module``: ``OnlineChatModule`` itself — build the request, send it, read the answer;
- ``sources``: the table of providers (endpoint, key variable, dialect);
- ``retry``: the retry policy (429/5xx, ``Retry-After``, backoff);
- ``sse``: the server-sent-events decoder and stream assembly;
- ``dialects``: the seam for native protocols, implemented by ``anthropic``, ``gemini`` and ``ollama``;
- ``response``: the whole answer (``Response``) of ``respond()`` and of a stream at its end;
- ``calls``: ``respond``, ``acall``, ``arespond``, ``astream``, ``with_options`` (mixed into the module);
- ``aio``: the bounded thread pool behind the async calls;
- ``redirects``: which redirects are followed (same origin, 307/308) and the error for the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from modules.online.redirects import CrossOriginRedirectError

if TYPE_CHECKING:  # pragma: no cover
    from modules.online.module import OnlineChatModule

__all__ = ["CrossOriginRedirectError", "OnlineChatModule"]


def __getattr__(name: str) -> Any:
    # Lazy, so that the parts with no HTTP in them (``aio``, ``response``) import without the
    # 'online' extra: TrainableModule's async calls use them.
    if name == "OnlineChatModule":
        from modules.online.module import OnlineChatModule

        return OnlineChatModule
    raise AttributeError(f"module 'modules.online' has no attribute {name!r}")
