"""A reader that stops early (``prompter view ... | head -1``) ends the command quietly, without a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_closed_pipe_on_stdout_ends_the_command_without_a_traceback() -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the command writes a byte: every write meets a broken pipe
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "modules.cli", "view", "Be brief.", "hi"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr, done.stderr
    assert "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == 1
