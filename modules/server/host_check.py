"""The ``Host`` check against DNS rebinding, as ASGI middleware of the model server and the playground.

A web page on ``attacker.example`` whose name the attacker's DNS then points at 127.0.0.1 is, to the browser,
still ``attacker.example``: its script may send requests to a server on this machine's loopback and read the
answers (same origin for the browser), each sent with ``Host: attacker.example``. A server that listens only on
a loopback address (127.0.0.1, any 127.x, ::1, localhost) is meant for this machine's own clients, who name it
``localhost``, ``127.x.x.x`` or ``[::1]``: any other ``Host`` is refused with a 403 naming the remedy. A server
listening on another address (0.0.0.0, a LAN address) answers any ``Host``, as it did before, unless given
``allowed_hosts`` (``--allowed-host``): then only those names, the loopback names and the address it listens on.
``"*"`` among them allows any ``Host`` wherever it listens (a reverse proxy on this machine that keeps the
public name, say).

Where it listens comes from :class:`~modules.server.lifecycle.ServerThread` (:func:`listening_on`); an app
served another way (``uvicorn module:app``) is judged by the address each connection arrived at. A request
without a ``Host`` header (HTTP/1.0) is answered: every browser sends one.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from modules.errors import ModuleConfigError

__all__ = ["HostCheck", "add_host_check", "check_allowed_hosts", "is_loopback", "listening_on"]

LISTEN_HOST = "prompter.listen_host"
"""The scope key holding the address the server listens on (set by :func:`listening_on`)."""

CHECKED = "prompter.host_checked"
"""The scope key set once a :class:`HostCheck` let a request through: a mounted app's own check then passes it."""


def _bare(host: str) -> str:
    """*host* without its port and brackets, in lower case: ``"[::1]:80"`` -> ``"::1"``, ``"Box:8"`` -> ``"box"``."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        rest = host[end + 1 :] if end > 0 else "x"
        return host[1:end] if rest == "" or (rest[0] == ":" and rest[1:].isdigit()) else host
    name, colon, port = host.rpartition(":")
    return name if colon and ":" not in name and port.isdigit() else host


def is_loopback(host: str) -> bool:
    """Whether *host* (a Host header or a listen address, a port allowed) names this machine's loopback:
    ``localhost``, an address in 127.0.0.0/8, or ``::1``."""
    name = _bare(host)
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_allowed_hosts(allowed_hosts: object) -> tuple[str, ...] | None:
    """*allowed_hosts* as the names it allows (lower case, no port), or a ModuleConfigError naming the fault."""
    if allowed_hosts is None:
        return None
    if isinstance(allowed_hosts, (str, bytes)) or not isinstance(allowed_hosts, Iterable):
        raise ModuleConfigError(
            f"allowed_hosts: expected a list of host names, got {type(allowed_hosts).__name__}; "
            "e.g. allowed_hosts=['mybox.lan'] (or --allowed-host mybox.lan)"
        )
    names = []
    for name in allowed_hosts:
        if not isinstance(name, str) or not name.strip() or any(c in name for c in "/ \t@"):
            raise ModuleConfigError(
                f"allowed_hosts: expected host names such as 'mybox.lan' or '192.168.1.5' ('*' for any), got {name!r}"
            )
        names.append(_bare(name))
    return tuple(names)


def listening_on(app: Any, host: str) -> Callable[..., Any]:
    """*app* told (in each request's scope) that the server listens on *host*, for :class:`HostCheck`."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") in ("http", "websocket"):
            scope = {**scope, LISTEN_HOST: host}
        await app(scope, receive, send)

    return asgi


class HostCheck:
    """ASGI middleware refusing (403, in the app's own error body) a request whose ``Host`` this server should
    not answer (see the module's docstring). *error_body* turns the message into the app's JSON error body."""

    def __init__(
        self,
        app: Any,
        allowed_hosts: tuple[str, ...] | None,
        error_body: Callable[[str], Mapping[str, Any]],
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.app, self.allowed, self.error_body = app, allowed_hosts, error_body
        self.headers = dict(headers or {})

    def refusal(self, scope: Any) -> str | None:
        """Why this request is refused, or None when it may go on."""
        listen = scope.get(LISTEN_HOST) or str((scope.get("server") or ("",))[0] or "")
        hosts = [value.decode("latin-1") for name, value in scope.get("headers", ()) if name == b"host"]
        for host in hosts:
            if is_loopback(host) or (self.allowed is None and not is_loopback(listen)):
                continue
            if self.allowed is not None and ("*" in self.allowed or _bare(host) in (*self.allowed, _bare(listen))):
                continue
            return _message(host[:100], listen, self.allowed)
        return None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") not in ("http", "websocket") or scope.get(CHECKED):
            await self.app(scope, receive, send)
            return
        problem = self.refusal(scope)
        if problem is None:
            scope[CHECKED] = True
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps(self.error_body(problem)).encode("ascii")
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in self.headers.items()]
        await send({"type": "http.response.start", "status": 403, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _message(host: str, listen: str, allowed: tuple[str, ...] | None) -> str:
    name = _bare(host) or host
    where = listen or "a loopback address"
    if allowed is None:
        said = f"this server listens on {where}, so it answers a Host naming loopback only (localhost, 127.x, [::1])"
    else:
        said = f"this server answers only a Host naming loopback, {listen or 'its address'} or {', '.join(allowed)}"
    return (
        f"the Host header {host!r} is not allowed: {said}, since a web page whose name is pointed at this machine "
        "(DNS rebinding) could otherwise use it; open it by a loopback address (http://127.0.0.1:PORT), "
        f"or, to serve the name {name!r}, listen on its address with --host, or allow it with --allowed-host {name} "
        f"(allowed_hosts=[{name!r}])"
    )


def add_host_check(
    app: Any,
    allowed_hosts: object,
    error_body: Callable[[str], Mapping[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Add :class:`HostCheck` to the Starlette *app*, outermost, its *allowed_hosts* checked now (a wrong one
    is a ModuleConfigError); *error_body* defaults to OpenAI's error envelope, code ``host_not_allowed``."""
    allowed = check_allowed_hosts(allowed_hosts)
    if error_body is None:
        from modules.server.errors import HTTPError

        error_body = lambda message: HTTPError(403, message, code="host_not_allowed").body()  # noqa: E731
    app.add_middleware(HostCheck, allowed_hosts=allowed, error_body=error_body, headers=headers)
