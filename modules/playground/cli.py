"""``prompter playground [--port N] [--host H] [--allowed-host NAME]``: the playground page, no model needed.

Two lines register it in :mod:`modules.cli` (:func:`add_parser` and :func:`run`).
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import socket
import sys
import time
from typing import Any

__all__ = ["add_parser", "check_address", "run"]


def add_parser(subparsers: Any) -> None:
    """Add the ``playground`` command to the ``prompter`` command line."""
    cmd = subparsers.add_parser(
        "playground", help="a page in the browser showing exactly what each model receives (no model needed)"
    )
    cmd.add_argument("--port", type=int, default=8765, help="TCP port (0 picks a free one; default: 8765)")
    cmd.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)")
    from modules.server.cli_options import add_allowed_host_option  # argparse only: no extra needed

    add_allowed_host_option(cmd)


def run(args: argparse.Namespace) -> int:
    """Serve the playground until Ctrl-C (or SIGTERM)."""
    from modules.errors import MissingExtraError

    check_address(args.host, args.port)
    missing = [name for name in ("fastapi", "uvicorn") if importlib.util.find_spec(name) is None]
    if missing:  # said here, not with modules.cli's helper: modules.cli imports this file
        raise MissingExtraError(
            f"this command needs the 'server' extra ({', '.join(missing)} not installed): "
            "pip install 'prompter-kit[server]'"
        )
    from modules.playground.app import create_playground_app
    from modules.server.lifecycle import ServerThread

    print(f"prompter: starting the playground on {args.host}:{args.port} ...", file=sys.stderr, flush=True)
    hosts = getattr(args, "allowed_host", None)
    app = create_playground_app(allowed_hosts=hosts)
    server = ServerThread(app, host=args.host, port=args.port).start()
    print(f"playground at {server.url}/  (Ctrl-C to stop)", flush=True)
    try:
        while server.thread.is_alive():  # short naps: the main thread must run the signal handlers
            time.sleep(0.25)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def check_address(host: str, port: int) -> None:
    """Raise a :class:`~modules.errors.ModuleConfigError` naming the remedy when a server could not listen on
    ``host:port`` (a port out of range or taken, a host that is no address of this machine): said before a
    model loads for seconds, and in one line, where the server would fail later with a log line of its own."""
    from modules.errors import ModuleConfigError

    if not 0 <= port <= 65535:
        raise ModuleConfigError(f"--port: expected 0..65535 (0 picks a free port), got {port}")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (OSError, UnicodeError) as exc:  # gaierror is an OSError; an over-long label a UnicodeError
        reason = getattr(exc, "strerror", None) or exc
        raise ModuleConfigError(
            f"--host: cannot listen on {host[:100]!r} ({reason}); give an address of this machine, e.g. 127.0.0.1"
        ) from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds: TIME_WAIT is no conflict
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ModuleConfigError(
                    f"--port: port {port} on {host} is already in use; stop what holds it, or pick another "
                    "with --port N (0 picks a free one)"
                ) from None
            raise ModuleConfigError(
                f"--host: cannot listen on {host!r} ({exc.strerror or exc}); give an address of this machine, "
                "e.g. 127.0.0.1"
            ) from None
