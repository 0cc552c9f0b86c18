"""The join benchmark keeps running (quick mode; timings are not asserted, the two ways' tokens are)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_join_benchmark_runs_in_quick_mode_and_both_ways_give_the_same_tokens() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_join.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line.split() for line in result.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert [row[0] for row in rows] == ["1", "8"]
