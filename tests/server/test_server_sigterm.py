"""SIGTERM to ``prompter serve`` (what a container runtime or systemd sends) ends every open stream in-band.

A stream cut without an error event looks to its client like a short but
complete answer; after SIGTERM each open stream must get OpenAI's
``data: {"error": {...}}`` event before the connection closes, as it does on
SIGINT and on ``stop()``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

ROOT = Path(__file__).resolve().parents[2]
STREAMS = 10


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_sigterm_ends_every_open_stream_with_an_error_event(tiny_model_path: Path, tmp_path: Path) -> None:  # noqa: F811
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    log = (tmp_path / "serve.log").open("w")  # a file, not a pipe: a full pipe would block the server
    server = subprocess.Popen(
        [sys.executable, "-m", "modules.cli", "serve", "--model", str(tiny_model_path), "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            try:
                name = httpx.get(url + "/models", timeout=2).json()["data"][0]["id"]
                break
            except httpx.HTTPError:
                time.sleep(0.2)

        opened = threading.Barrier(STREAMS + 1, timeout=60)
        endings: list[str] = []

        def read_stream() -> None:
            body = {"model": name, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1800, "stream": True}
            last = ""
            try:
                with httpx.stream("POST", url + "/chat/completions", json=body, timeout=60) as response:
                    lines = (line for line in response.iter_lines() if line.startswith("data: "))
                    last = next(lines)  # the first chunk: the stream is open
                    opened.wait()
                    for line in lines:
                        last = line
            except httpx.HTTPError as exc:
                last = f"transport error: {exc!r}"
            endings.append(last)

        threads = [threading.Thread(target=read_stream) for _ in range(STREAMS)]
        for t in threads:
            t.start()
        opened.wait()
        server.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(120)
        server.wait(120)  # bounded waits, generous for a loaded 2-core CI box; stop() itself waits at most 10 s
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        log.close()
    assert len(endings) == STREAMS
    errors = [json.loads(last[6:])["error"] for last in endings if last.startswith('data: {"error"')]
    assert len(errors) == STREAMS, f"{STREAMS - len(errors)} of {STREAMS} streams cut silently: {endings[:2]}"
    assert all(e["code"] == "server_shutting_down" and e["type"] == "server_error" for e in errors)
    assert server.returncode == -signal.SIGTERM  # then it ends as SIGTERM would have ended it


_TGKILL = {"x86_64": 234, "aarch64": 131}.get(os.uname().machine)


def _tgkill(pid: int, tid: int, sig: int) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(_TGKILL, pid, tid, sig) != 0:
        raise OSError(ctypes.get_errno(), "tgkill failed")


def test_sigterm_received_by_a_worker_thread_still_stops_the_server(tiny_model_path: Path, tmp_path: Path) -> None:  # noqa: F811
    """The kernel may hand a process-wide SIGTERM to any thread; the process must still stop promptly.

    Python runs signal handlers only in the main thread, between bytecodes: a main
    thread parked in one long sleep never ran the handler, and the server lived on.
    """
    assert _TGKILL is not None, f"no tgkill syscall number for {os.uname().machine}"
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "modules.cli", "serve", "--model", str(tiny_model_path), "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            try:
                httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).raise_for_status()
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        workers = [int(t) for t in os.listdir(f"/proc/{server.pid}/task") if int(t) != server.pid]
        assert workers, "the server runs in a thread of its own"
        _tgkill(server.pid, workers[-1], signal.SIGTERM)
        try:
            server.wait(60)  # stop() waits at most 10 s; the rest is slack for a loaded machine
        except subprocess.TimeoutExpired:
            raise AssertionError("SIGTERM delivered to a worker thread did not stop the server") from None
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        log.close()
    assert server.returncode == -signal.SIGTERM
