"""SIGTERM while serving: stop every server as ``stop()`` does (open streams get an error event), then exit.

uvicorn installs its own signal handlers only when it runs in the main thread;
ours runs in a thread, so without this a SIGTERM (what ``docker stop``,
Kubernetes and systemd send) killed the process at once and every open stream
was cut with no error event, while Ctrl-C went through ``stop()``.

The handler is installed by the first server started from the main thread,
only while SIGTERM has its default action (a handler the application set is
left alone), and removed when the last server stops. After stopping the
servers it restores the default action and sends SIGTERM again, so the process
still ends as SIGTERM ends it (exit status 143 / -15).

Python runs the handler in the main thread only, between bytecodes, even when
the kernel hands the signal to another thread: a main thread that blocks for
long (one ``time.sleep(3600)``) defers the stop. ``prompter serve`` naps in
short steps for that reason; an application serving from its main thread
should do the same (or ``join`` with a timeout in a loop).
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any, Protocol

__all__ = ["forget", "watch"]


class _Stoppable(Protocol):
    def stop(self, timeout: float = 10.0) -> None: ...


_servers: list[_Stoppable] = []
_lock = threading.Lock()


def _on_sigterm(signum: int, frame: Any) -> None:
    with _lock:
        servers = list(_servers)
        _servers.clear()
    # Together, not one after the other: each stop waits for its own streams to end.
    stoppers = [threading.Thread(target=s.stop, name="prompter-sigterm") for s in servers]
    for t in stoppers:
        t.start()
    for t in stoppers:
        t.join(30.0)  # each stop() is bounded (10 s); never let a stuck one keep the process alive
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def watch(server: _Stoppable) -> None:
    """Stop *server* gracefully on SIGTERM (installs the handler when called from the main thread)."""
    if not _in_main_thread():
        return
    current = signal.getsignal(signal.SIGTERM)
    if current not in (signal.SIG_DFL, _on_sigterm):
        return  # the application handles SIGTERM itself
    with _lock:
        _servers.append(server)
    signal.signal(signal.SIGTERM, _on_sigterm)


def forget(server: _Stoppable) -> None:
    """*server* has stopped: no longer stop it on SIGTERM; restore the default action after the last one."""
    with _lock:
        if server in _servers:
            _servers.remove(server)
        last = not _servers
    if last and _in_main_thread() and signal.getsignal(signal.SIGTERM) is _on_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
