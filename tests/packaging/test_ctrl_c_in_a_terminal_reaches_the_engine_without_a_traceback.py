"""Ctrl-C in a terminal signals the whole process group: ``prompter serve``'s engine process too.

The engine process (``max_batch_size`` > 1, serve's default) printed a
``KeyboardInterrupt`` traceback from its ``conn.recv()`` while the server itself
stopped cleanly. Its life is its parent's business (a stop message, or the
parent's socket closing), so the terminal's SIGINT leaves it alone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

ROOT = Path(__file__).resolve().parents[2]


def test_ctrl_c_to_the_process_group_stops_serve_without_a_traceback(tiny_model_path: Path) -> None:  # noqa: F811
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "modules.cli", "serve", "--model", str(tiny_model_path), "--port", "0"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("serving "), (line, server.stderr.read() if server.poll() is not None else "")
        url = line.split(" at ", 1)[1].split()[0]
        body = {"model": tiny_model_path.name, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}
        request = urllib.request.Request(
            f"{url}/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - our own server on 127.0.0.1
            assert json.load(response)["choices"][0]["message"]["role"] == "assistant"
    finally:
        os.killpg(server.pid, signal.SIGINT)  # what the terminal does on Ctrl-C: every process of the group
        _, err = server.communicate(timeout=60)
    assert server.returncode == 0, err[-3000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
