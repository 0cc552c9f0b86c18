"""``prompter serve`` as a user runs it: progress on stderr, the URL on stdout, an answer, a clean Ctrl-C."""

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


def test_serve_reports_progress_then_answers_and_stops_cleanly_on_ctrl_c(tiny_model_path: Path) -> None:  # noqa: F811
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "modules.cli", "serve", "--model", str(tiny_model_path), "--port", "0"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # blocks until the server is up (or the process died)
        assert line.startswith("serving "), (line, server.stderr.read() if server.poll() is not None else "")
        url = line.split(" at ", 1)[1].split()[0]
        body = {"model": tiny_model_path.name, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}
        request = urllib.request.Request(
            f"{url}/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - our own server on 127.0.0.1
            answer = json.load(response)
        assert answer["choices"][0]["message"]["role"] == "assistant"
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=60)
    assert server.returncode == 0, err[-3000:]
    assert "Traceback" not in err
    steps = [line for line in err.splitlines() if line.startswith("prompter: ")]
    assert [s.split()[1] for s in steps] == ["loading", "model", "starting", "server"], steps
