"""A ``requests`` adapter whose every socket read honours the call's total deadline.

``requests`` (like ``urllib3`` and ``http.client`` under it) applies a timeout to
each ``recv``: a server that sends one byte just before each read timeout keeps a
call alive forever, through the status line, the headers, a chunk-size line or the
body. Checking the clock between chunks does not help either, since one chunk read
can be many ``recv`` calls.

:class:`DeadlineAdapter` installs a connection class whose responses read the
socket through :class:`_DeadlineReader`: before each ``recv`` it sets the socket
timeout to ``min(read timeout, time left)``, and once no time is left it raises
``TimeoutError`` (which ``urllib3`` turns into a read timeout). The deadline is
taken, when the response starts, from :func:`deadline_scope` of the sending
thread, and stays with that response for every later read, in any thread.

A caller's own ``session=`` keeps its adapters (they are the caller's): there,
:func:`arm_response` puts the same reader under the body of each response once its
headers are in, so only the status line and headers are left bounded by the read
timeout alone.
"""

from __future__ import annotations

import http.client
import io
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

__all__ = ["DeadlineAdapter", "arm_response", "deadline_scope", "mount_deadline_adapters"]

Clock = Callable[[], float]

_current = threading.local()  # (deadline, clock) of the attempt this thread is sending


@contextmanager
def deadline_scope(deadline: float | None, clock: Clock) -> Iterator[None]:
    """Responses started by this thread inside the block stop reading at ``deadline`` (by ``clock``)."""
    previous = getattr(_current, "value", None)
    _current.value = None if deadline is None else (deadline, clock)
    try:
        yield
    finally:
        _current.value = previous


class DeadlineExceeded(socket.timeout):
    """No time is left before the total deadline (a ``TimeoutError``, so urllib3 reports a read timeout)."""


class _DeadlineReader(io.RawIOBase):
    """The socket's raw reader, with each ``recv`` bounded by the time left."""

    def __init__(self, raw: Any, sock: socket.socket, deadline: float, clock: Clock) -> None:
        super().__init__()
        self._raw = raw
        # a socket's raw reader does one recv per readinto; a buffered one must be asked for one read only
        self._readinto = getattr(raw, "readinto1", raw.readinto)
        self._sock = sock
        self._deadline = deadline
        self._clock = clock
        self._base = sock.gettimeout()  # urllib3's read timeout, set just before the response starts

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        left = self._deadline - self._clock()
        if left <= 0:
            raise DeadlineExceeded("the total deadline passed")
        self._sock.settimeout(left if self._base is None else min(self._base, left))
        result: int | None = self._readinto(buffer)
        return result

    def fileno(self) -> int:
        return int(self._raw.fileno())

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _DeadlineHTTPResponse(http.client.HTTPResponse):
    def __init__(self, sock: socket.socket, debuglevel: int = 0, method: str | None = None, url: str | None = None):
        super().__init__(sock, debuglevel, method, url)
        scope = getattr(_current, "value", None)
        if scope is not None:
            raw = self.fp.detach()  # nothing was read yet: no buffered bytes are lost
            self.fp = io.BufferedReader(_DeadlineReader(raw, sock, *scope))


class _Connection(HTTPConnection):
    response_class = _DeadlineHTTPResponse


class _SecureConnection(HTTPSConnection):
    response_class = _DeadlineHTTPResponse


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Connection


class _SecurePool(HTTPSConnectionPool):
    ConnectionCls = _SecureConnection


_POOLS = {"http": _Pool, "https": _SecurePool}


class DeadlineAdapter(HTTPAdapter):
    """An ``HTTPAdapter`` whose connections read under the sending thread's :func:`deadline_scope`."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = dict(_POOLS)

    def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **kwargs)
        if not proxy.lower().startswith("socks"):  # SOCKS managers bring their own connection classes
            manager.pool_classes_by_scheme = dict(_POOLS)
        return manager


def arm_response(response: Any, deadline: float | None, clock: Clock) -> None:
    """Bound each further socket read of ``response`` (a ``requests.Response``) by ``deadline``.

    For responses of sessions without :class:`DeadlineAdapter`; does nothing when the
    response is already bounded or its socket cannot be found.
    """
    if deadline is None:
        return
    inner = getattr(response.raw, "_fp", None)  # the http.client response under urllib3's
    if not isinstance(inner, http.client.HTTPResponse) or isinstance(inner, _DeadlineHTTPResponse):
        return
    fp = inner.fp
    sock = getattr(getattr(fp, "raw", None), "_sock", None)
    if fp is None or not isinstance(sock, socket.socket):
        return
    inner.fp = io.BufferedReader(_DeadlineReader(fp, sock, deadline, clock))


def mount_deadline_adapters(session: Any, pool_maxsize: int = 10) -> None:
    """Mount :class:`DeadlineAdapter` for http:// and https:// on a session the module owns
    (``pool_maxsize``: connections kept per host, as many as calls may run at once)."""
    session.mount("https://", DeadlineAdapter(pool_maxsize=pool_maxsize))
    session.mount("http://", DeadlineAdapter(pool_maxsize=pool_maxsize))
