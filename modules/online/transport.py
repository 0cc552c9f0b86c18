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

Connecting is bounded as a whole: name resolution, the TCP connect (over every address
the name resolves to) and the TLS handshake share one budget, the connect timeout (already
cut to the time left before the deadline). ``socket.getaddrinfo`` has no timeout of its own,
so it runs in a short-lived daemon thread that the call stops waiting for at the budget's end.

A caller's own ``session=`` is never changed: :func:`sending_session` sends through a shallow
view of it (its headers, cookies, auth, proxies, verify and cert as they are at each call)
whose plain ``HTTPAdapter`` s are replaced by :class:`DeadlineAdapter` s with the same settings,
so its calls are bounded exactly like the module's own. An adapter of another kind (a
subclass, a mock transport) is kept as the caller made it; there :func:`arm_response` puts the
same reader under the body of each response once its headers are in, so only its status line
and headers are left bounded by the read timeout alone.
"""

from __future__ import annotations

import copy
import http.client
import io
import ipaddress
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from requests.adapters import DEFAULT_POOLBLOCK, DEFAULT_POOLSIZE, HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError
from urllib3.util.connection import allowed_gai_family

__all__ = [
    "DeadlineAdapter",
    "arm_response",
    "close_adapters",
    "deadline_scope",
    "mount_deadline_adapters",
    "sending_session",
]

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


def _resolve(host: str, port: int, budget: float) -> list[str]:
    """The addresses of ``host``, in the resolver's order; at most ``budget`` seconds are waited for them."""
    bare = host.strip("[]")
    try:
        ipaddress.ip_address(bare.split("%", 1)[0])
        return [bare]  # already an address: nothing to resolve
    except ValueError:
        pass
    found: dict[str, Any] = {}
    done = threading.Event()

    def lookup() -> None:
        try:
            found["infos"] = socket.getaddrinfo(bare, port, allowed_gai_family(), socket.SOCK_STREAM)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            found["error"] = exc
        done.set()

    # a daemon thread: a resolver that never answers must hold neither the call nor the interpreter's exit
    threading.Thread(target=lookup, name="prompter-dns", daemon=True).start()
    if not done.wait(budget):
        raise TimeoutError(f"resolving {host} took longer than {budget:.3g} s")
    if "error" in found:
        raise found["error"]
    return list(dict.fromkeys(str(info[4][0]) for info in found["infos"]))


class _BoundedConnect:
    """Name resolution, TCP connect and the TLS handshake within one budget: the connect timeout."""

    timeout: Any
    host: str
    port: int
    _dns_host: str
    sock: Any

    def _new_conn(self) -> socket.socket:
        budget = self.timeout
        if isinstance(budget, bool) or not isinstance(budget, (int, float)):
            return super()._new_conn()  # type: ignore[misc,no-any-return]  # no timeout was asked for
        end = time.monotonic() + budget
        name = self._dns_host
        try:
            addresses = _resolve(name, self.port, budget)
        except TimeoutError as exc:
            raise ConnectTimeoutError(self, f"Connection to {self.host} timed out resolving its name. "
                                      f"(connect timeout={budget})") from exc  # fmt: skip
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc  # type: ignore[arg-type]
        failure: ConnectTimeoutError | None = None
        try:
            for address in addresses:
                left = end - time.monotonic()
                if left <= 0:
                    break
                self._dns_host, self.timeout = address, left
                try:
                    sock: socket.socket = super()._new_conn()  # type: ignore[misc]
                except ConnectTimeoutError as exc:  # urllib3's NewConnectionError is one too
                    failure = exc
                    continue
                # the TLS handshake (its timeout spans the whole handshake) gets only what is left
                sock.settimeout(max(end - time.monotonic(), 1e-3))
                return sock
        finally:
            self._dns_host, self.timeout = name, budget
        raise failure or ConnectTimeoutError(self, f"Connection to {self.host} timed out. (connect timeout={budget})")

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        if self.sock is not None and isinstance(self.timeout, (int, float)):
            self.sock.settimeout(self.timeout)  # sending the request: the connect timeout, as urllib3 does


class _Connection(_BoundedConnect, HTTPConnection):
    response_class = _DeadlineHTTPResponse


class _SecureConnection(_BoundedConnect, HTTPSConnection):
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


_twins_lock = threading.Lock()


def sending_session(session: Any, twins: dict[int, tuple[Any, DeadlineAdapter]]) -> Any:
    """The session to send with: ``session`` itself when every adapter bounds its reads, else a view
    of it whose plain ``HTTPAdapter`` s are :class:`DeadlineAdapter` twins (kept in ``twins``, which the
    module closes). The caller's session is read, never changed."""
    if all(isinstance(a, DeadlineAdapter) for a in session.adapters.values()):
        return session
    view = copy.copy(session)  # shallow: the caller's headers, cookie jar, auth, proxies... shared as they are
    view.adapters = OrderedDict((prefix, _twin(a, twins)) for prefix, a in session.adapters.items())
    return view


def _twin(adapter: Any, twins: dict[int, tuple[Any, DeadlineAdapter]]) -> Any:
    if type(adapter) is not HTTPAdapter:
        return adapter  # a subclass or another transport: its behaviour is the caller's, kept as is
    with _twins_lock:
        kept = twins.get(id(adapter))
        if kept is not None and kept[0] is adapter:
            return kept[1]
        settings = vars(adapter)  # the constructor's arguments, as HTTPAdapter keeps them
        twin = DeadlineAdapter(
            pool_connections=settings.get("_pool_connections", DEFAULT_POOLSIZE),
            pool_maxsize=settings.get("_pool_maxsize", DEFAULT_POOLSIZE),
            max_retries=adapter.max_retries,
            pool_block=settings.get("_pool_block", DEFAULT_POOLBLOCK),
        )
        twin.poolmanager.connection_pool_kw.update(adapter.poolmanager.connection_pool_kw)
        twins[id(adapter)] = (adapter, twin)  # the adapter is kept too, so its id is not reused
        return twin


def close_adapters(twins: dict[int, tuple[Any, DeadlineAdapter]]) -> None:
    """Close the pools of the twins :func:`sending_session` made."""
    with _twins_lock:
        made = [twin for _, twin in twins.values()]
        twins.clear()
    for twin in made:
        twin.close()
