"""Smoke test of the benchmark script: it runs, and the module is not wildly slower than bare requests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_online.py"


def test_bench_online_quick_runs_and_reports_a_ratio():
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json"], capture_output=True, text=True, timeout=120, check=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["calls"] == 200
    assert result["bare_median_us"] > 0 and result["module_median_us"] > 0
    # The bar (1.2x) is checked by the full run; a 200-call smoke run on a busy machine is noisier.
    assert result["ratio"] < 2.0, result
