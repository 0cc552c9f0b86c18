"""The online side: ``OnlineChatModule`` over HTTP to hosted chat APIs.

- ``module``: ``OnlineChatModule`` itself — build the request, send it, read the answer;
- ``sources``: the table of providers (endpoint, key variable, dialect);
- ``retry``: the retry policy (429/5xx, ``Retry-After``, backoff);
- ``sse``: the server-sent-events decoder and stream assembly.
"""

from modules.online.module import OnlineChatModule

__all__ = ["OnlineChatModule"]
