"""The README's demo and the server benchmark run, offline, as shipped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _env(cache: Path) -> dict[str, str]:
    """An offline environment with a fresh model cache and the checkout importable."""
    env = dict(os.environ)
    env.update(
        PROMPTER_CACHE=str(cache),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p),
    )
    return env


def test_demo_runs_offline_and_both_paths_agree(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "modules.demo"],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "<|im_start|>system\nYou are terse." in out  # the rendered chat-template string
    assert '"messages": [' in out  # the OpenAI body
    assert "(same as in-process: True)" in out
    assert (tmp_path / "prompter-tiny" / "qwen2.5-0" / ".complete").is_file()


def test_benchmark_quick_mode(tmp_path: Path) -> None:
    out_file = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_server.py", "--quick", "--json", str(out_file)],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    numbers = json.loads(out_file.read_text())
    assert numbers["in_process_ms"] > 0 and numbers["over_http_ms"] > 0
    assert set(numbers["concurrency"]) == {"1", "8", "64"}
    assert all(row["requests_per_s"] > 0 for row in numbers["concurrency"].values())
    # engine process, then the loop in the server, then a program's threads calling one module (no HTTP)
    keys = ("concurrency_batched", "concurrency_batched_in_server", "concurrency_batched_stream", "concurrency_in_process")
    for key in (*keys, "concurrency_floor"):  # the last: the load generator against a server that never slows
        assert set(numbers[key]) == {"1", "8", "64"}
        assert all(row["mismatched"] == 0 for row in numbers[key].values())
    assert numbers["engine_process_x"] > 0
