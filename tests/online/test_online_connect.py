"""Threat: a call held before the first byte of the request is sent, where no read timeout applies --
a name that never resolves, a host that accepts the TCP connection but never finishes the TLS
handshake -- and the same on a caller's own ``session=``, which must be bounded like the module's.

No timing is asserted: each test checks that the call raised while the stalling party was still
stalling (the resolver had not answered, the server had not let go), i.e. the client gave up at its
budget, not when the other side finally moved.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
import requests
from fault_server import Drip, FaultServer, Reply, http_answer

from modules import OnlineChatModule
from modules.errors import APITimeoutError
from modules.online.module import Timeout

KEY = "sk-test-0123456789abcdef"
SLOW_NAME = "slow-resolver.invalid"


class SlowResolver:
    """``socket.getaddrinfo`` for :data:`SLOW_NAME` answers 127.0.0.1 only when released (or after 5 s);
    every other name resolves as usual. The HTTP server behind it is real."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.answered = threading.Event()
        self._real = socket.getaddrinfo

    def __call__(self, host, port, *args, **kwargs):
        if host != SLOW_NAME:
            return self._real(host, port, *args, **kwargs)
        self.release.wait(5)
        self.answered.set()
        return self._real("127.0.0.1", port, *args, **kwargs)


@pytest.fixture
def resolver(monkeypatch) -> Iterator[SlowResolver]:
    """A resolver that stalls on one name (the only way to stall DNS on a loopback-only machine)."""
    slow = SlowResolver()
    monkeypatch.setattr(socket, "getaddrinfo", slow)
    yield slow
    slow.release.set()


class SilentTLS:
    """A TCP server that accepts connections and never says a word (no TLS handshake) until released."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.release = threading.Event()
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        held = []
        while not self.release.is_set():
            self.listener.settimeout(0.05)
            try:
                sock, _ = self.listener.accept()
            except OSError:
                continue
            self.accepted += 1
            held.append(sock)
        for sock in held:
            sock.close()

    def close(self) -> None:
        self.release.set()
        self._thread.join(5)
        self.listener.close()


def _session(kind: str) -> requests.Session | None:
    return requests.Session() if kind == "caller" else None


@pytest.mark.parametrize("kind", ["module", "caller"], ids=["module-session", "caller-session"])
def test_a_resolver_that_never_answers_cannot_hold_a_call_past_the_connect_timeout(resolver, kind):
    with FaultServer() as server:
        port = server.base_url.rsplit(":", 1)[1].split("/")[0]
        session = _session(kind)
        m = OnlineChatModule(
            base_url=f"http://{SLOW_NAME}:{port}/v1",
            model="m",
            api_key=KEY,
            max_retries=0,
            timeout=Timeout(connect=0.3, read=5, total=30),
            session=session,
        )
        with m, pytest.raises(APITimeoutError):
            m("hi")
        assert not resolver.answered.is_set(), "the call waited for the resolver, past its connect timeout"
        assert server.attempts == 0
        if session is not None:
            session.close()


@pytest.mark.parametrize("kind", ["module", "caller"], ids=["module-session", "caller-session"])
def test_a_host_that_never_finishes_the_tls_handshake_is_bounded_by_the_connect_timeout(kind):
    silent = SilentTLS()
    session = _session(kind)
    try:
        m = OnlineChatModule(
            base_url=f"https://127.0.0.1:{silent.port}/v1",
            model="m",
            api_key=KEY,
            max_retries=0,
            timeout=Timeout(connect=0.3, read=30, total=30),
            session=session,
        )
        with m, pytest.raises(APITimeoutError):
            m("hi")
        assert silent.accepted == 1 and not silent.release.is_set()
    finally:
        silent.close()
        if session is not None:
            session.close()


def test_with_a_callers_own_session_dripped_status_line_and_headers_end_at_the_deadline():
    data = http_answer(b"{}", headers={f"x-pad-{i}": "p" * 5 for i in range(10)})
    drip = Drip(data, every=0.1)
    with FaultServer() as server, requests.Session() as session:
        server.script.append(drip)
        m = OnlineChatModule(
            base_url=server.base_url,
            model="m",
            api_key=KEY,
            max_retries=0,
            session=session,
            timeout=Timeout(connect=1, read=5, total=1.0),
        )
        with pytest.raises(APITimeoutError, match="deadline"):
            m("hi")
        m.close()
    assert drip.sent < len(data) // 2, (drip.sent, len(data))


def test_a_callers_session_is_used_as_it_is_and_never_changed():
    """Its headers, cookies and adapters at call time are honoured; the session object is not modified."""
    with FaultServer() as server, requests.Session() as session:
        adapters = dict(session.adapters)
        session.headers["X-Trace"] = "trace-1"
        server.script.append(Reply(headers={"Set-Cookie": "sid=abc; Path=/"}))
        m = OnlineChatModule(base_url=server.base_url, model="m", api_key=KEY, session=session)
        assert m("hi") == "ok"
        session.headers["X-Trace"] = "trace-2"  # changed after the module was made: the next call sees it
        assert m("hi") == "ok"
        m.close()
        assert session.adapters == adapters and all(type(a) is requests.adapters.HTTPAdapter for a in adapters.values())
        assert session.cookies.get("sid") == "abc"  # the answer's cookie lands in the caller's jar
    first, second = server.requests
    assert first.headers["x-trace"] == "trace-1" and second.headers["x-trace"] == "trace-2"
    assert second.headers.get("cookie") == "sid=abc"
