"""The benchmark script keeps running (quick mode; timings are not asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_benchmark_runs_in_quick_mode() -> None:
    pytest.importorskip("transformers")
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_model_format.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "P4 qwen2.5 + 2 tools" in result.stdout
    assert "F1 chatml fixed strings" in result.stdout


def test_all_families_benchmark_runs_in_quick_mode() -> None:
    pytest.importorskip("transformers")
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_formats_all.py"),
            "--quick",
            "--family",
            "qwen3",
            "--family",
            "gemma-3",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "qwen3" in result.stdout and "gemma-3" in result.stdout
    assert "DIFFERENT" not in result.stdout
    assert "1000/10" in result.stdout
