"""``prompter playground [--port N]``: the playground page on 127.0.0.1, no model needed.

Two lines register it in :mod:`modules.cli` (:func:`add_parser` and :func:`run`).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Add the ``playground`` command to the ``prompter`` command line."""
    cmd = subparsers.add_parser(
        "playground", help="a page in the browser showing exactly what each model receives (no model needed)"
    )
    cmd.add_argument("--port", type=int, default=8765, help="TCP port (0 picks a free one; default: 8765)")
    cmd.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)")


def run(args: argparse.Namespace) -> int:
    """Serve the playground until Ctrl-C (or SIGTERM)."""
    from modules.errors import MissingExtraError, ModuleConfigError

    if not 0 <= args.port <= 65535:
        raise ModuleConfigError(f"--port: expected 0..65535 (0 picks a free port), got {args.port}")
    missing = [name for name in ("fastapi", "uvicorn") if importlib.util.find_spec(name) is None]
    if missing:  # said here, not with modules.cli's helper: modules.cli imports this file
        raise MissingExtraError(
            f"prompter playground needs the 'server' extra ({', '.join(missing)} not installed): "
            "pip install 'prompter-kit[server]'"
        )
    from modules.playground.app import create_playground_app
    from modules.server.lifecycle import ServerThread

    print(f"prompter: starting the playground on {args.host}:{args.port} ...", file=sys.stderr, flush=True)
    server = ServerThread(create_playground_app(), host=args.host, port=args.port).start()
    print(f"playground at {server.url}/  (Ctrl-C to stop)", flush=True)
    try:
        while server.thread.is_alive():  # short naps: the main thread must run the signal handlers
            time.sleep(0.25)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
