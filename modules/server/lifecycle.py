"""The server's lifecycle: admission of requests (429, 503 while stopping) and uvicorn in a thread."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from modules.errors import ModuleConfigError, ModuleError
from modules.server import signals
from modules.server.errors import HTTPError

MAX_REQUEST_HEAD_BYTES = 4 * 1024 * 1024
"""The longest request line and headers uvicorn accepts. Its h11 default (16 KB) is checked only while
a request is still arriving, so a longer link (the playground keeps its whole state in the URL: up to
100 000 characters a field) passed or got a 400 depending on how TCP split it."""

__all__ = ["ServerState", "ServerThread"]


@dataclass
class ServerState:
    module: Any
    model_name: str
    max_concurrency: int
    in_flight: int = 0
    closing: bool = False
    created: int = field(default_factory=lambda: int(time.time()))
    cancels: set[threading.Event] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    executor: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        self.executor = ThreadPoolExecutor(self.max_concurrency, thread_name_prefix="prompter-generate")

    def admit(self) -> threading.Event:
        with self.lock:
            if self.closing:
                raise HTTPError(503, "the server is shutting down", type="server_error", code="server_shutting_down")
            if self.in_flight >= self.max_concurrency:
                raise HTTPError(
                    429,
                    f"over the limit of {self.max_concurrency} requests in flight; retry shortly",
                    type="rate_limit_error",
                    code="rate_limit_exceeded",
                    headers={"Retry-After": "1"},
                )
            self.in_flight += 1
            cancel = threading.Event()
            self.cancels.add(cancel)
            return cancel

    def release(self, cancel: threading.Event) -> None:
        """Give back the slot :meth:`admit` gave with *cancel*; again for the same one, nothing."""
        with self.lock:
            if cancel in self.cancels:
                self.in_flight -= 1
                self.cancels.discard(cancel)

    def close(self) -> None:
        with self.lock:
            self.closing = True
        self.executor.shutdown(wait=False)


def _checked_address(host: object, port: object) -> tuple[str, int]:
    """*host* (its exact text) and *port*, or a ModuleConfigError naming the one uvicorn could not listen on:
    in its thread, a bad one is only "did not start", and ``True`` or ``1.5`` would listen on port 1."""
    if not issubclass(type(host), str) or not str.strip(host):  # type: ignore[arg-type]
        raise ModuleConfigError(
            "host: expected the interface to listen on, a non-empty str ('127.0.0.1', or '0.0.0.0' for every "
            f"interface), got {type(host).__name__ if not issubclass(type(host), str) else 'a blank str'}"
        )
    if type(port) is not int or not 0 <= port <= 65535:
        raise ModuleConfigError(f"port: expected an int from 0 to 65535 (0 picks a free port), got {port!r}")
    return str.__str__(host), port


class ServerThread:
    """uvicorn serving an app from a background thread, on 127.0.0.1 and a free port by default.

    ::

        server = ServerThread(create_app(module)).start()
        server.url     # http://127.0.0.1:PORT
        server.stop()  # streams in flight get an error event; waits for them to end
    """

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, graceful_timeout: int = 5) -> None:
        import uvicorn

        from modules.server.host_check import listening_on
        from modules.server.protocol import EnvelopeH11Protocol

        host, port = _checked_address(host, port)
        if isinstance(graceful_timeout, bool) or not isinstance(graceful_timeout, int) or graceful_timeout < 0:
            raise ModuleConfigError(
                f"graceful_timeout: expected an int >= 0 (seconds a stop waits for streams), got {graceful_timeout!r}"
            )
        self.app = app
        self.config = uvicorn.Config(
            listening_on(app, host),  # where it listens decides which Host names it answers (host_check)
            host=host,
            port=port,
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=graceful_timeout,
            access_log=False,
            h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES,
            http=EnvelopeH11Protocol,  # unparsable HTTP answered in OpenAI's envelope, not plain text
        )
        self.server = uvicorn.Server(self.config)
        self.thread = threading.Thread(target=self.server.run, name="prompter-server", daemon=True)
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        """``http://host:port`` (no path; an IPv6 address in brackets, as URLs write it)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self, timeout: float = 30.0) -> ServerThread:
        """Start serving; return once the socket accepts connections."""
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise ModuleError(f"the server did not start on {self.host}:{self.port}")
            time.sleep(0.01)
        sockets = [s for server in getattr(self.server, "servers", []) for s in server.sockets]
        if sockets:
            self.port = sockets[0].getsockname()[1]
        signals.watch(self)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Refuse new requests, cancel generations in flight, and wait for their streams to end.

        SIGTERM does the same (see :mod:`modules.server.signals`) for servers started from the main thread.
        """
        state: ServerState | None = getattr(getattr(self.app, "state", None), "prompter", None)  # any ASGI app
        if state is not None:
            state.close()
            with state.lock:
                for cancel in state.cancels:
                    cancel.set()
        self.server.should_exit = True
        self.thread.join(timeout)
        signals.forget(self)
