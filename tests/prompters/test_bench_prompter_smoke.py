"""The benchmark still runs and still compares like with like (so it cannot rot)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "bench_prompter.py"
WORKER = ROOT / "benchmarks" / "_lazyllm_worker.py"


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    """benchmarks/bench_prompter.py, imported as a module."""
    spec = importlib.util.spec_from_file_location("bench_prompter", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


@pytest.mark.parametrize("case", ["P1", "P2", "P3"])
def test_hand_written_output_equals_prompters(bench: ModuleType, case: str) -> None:
    by_name = {c.name: c for c in bench.build_cases()}
    ours, hand = by_name[case].ours(), by_name[case].hand()
    assert type(ours) is type(hand)
    assert ours == hand


def test_check_outputs_catches_a_difference(bench: ModuleType) -> None:
    case = bench.build_cases()[0]
    broken = bench.Case(case.name, case.title, case.ours, lambda: case.hand() + " ")
    with pytest.raises(AssertionError, match="P1"):
        bench.check_outputs([broken])


def test_quick_run_produces_a_row_per_case(bench: ModuleType) -> None:
    report = bench.run(number=20, repeat=2, quick=True, lazyllm=False, import_runs=0)
    assert [row.name for row in report.rows] == ["P1", "P2", "P3"]
    for row in report.rows:
        assert row.ours_us > 0 and row.hand_us > 0
        assert row.lazyllm_us is None
    assert report.lazyllm_status == "skipped"
    text = bench.format_report(report)
    for needle in ("P1", "P2", "P3", "ours/hand", "bars:", "within 3x of hand-written"):
        assert needle in text
    assert json.loads(json.dumps(bench.report_dict(report)))["rows"][0]["name"] == "P1"


def test_missing_lazyllm_is_reported_not_fatal(bench: ModuleType, tmp_path: Path) -> None:
    report = bench.run(number=5, repeat=1, lazyllm_python=tmp_path / "no-python", import_runs=0)
    assert report.lazyllm_status.startswith("not installed")
    assert "n/a" in bench.format_report(report)


def test_script_quick_mode_prints_the_table() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--number", "20", "--import-runs", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    rows = [line for line in proc.stdout.splitlines() if line.startswith(("P1 ", "P2 ", "P3 "))]
    assert len(rows) == 3
    assert "import prompter (median of 1 fresh processes" in proc.stdout and "ms net" in proc.stdout


def test_lazyllm_worker_spec_carries_the_same_work(bench: ModuleType) -> None:
    """The worker gets exactly our instruction, slots, tools, history and input."""
    spec = bench.lazyllm_spec(10, 1)
    assert spec["P1"] == {"instruction": bench.P1_INSTRUCTION, "input": bench.P1_INPUT}
    assert spec["chat"]["tools"] == bench.TOOLS and len(spec["chat"]["tools"]) == 2
    assert spec["chat"]["history"] == bench.HISTORY and len(spec["chat"]["history"]) == 3
    assert WORKER.exists()


@pytest.mark.skipif(
    not (ROOT / ".lazyllm-venv" / "bin" / "python").exists(), reason="LazyLLM venv absent (setup_lazyllm.sh)"
)
def test_lazyllm_worker_runs_every_case(bench: ModuleType) -> None:
    result = bench.run_lazyllm(bench.LAZYLLM_PYTHON, number=5, repeat=1, timeout=60)
    assert set(result["results"]) == {"P1", "P2", "P3"}
    p1, p3 = result["results"]["P1"]["output"], result["results"]["P3"]["output"]
    assert "Answer about cats using Cats purr" in p1  # the same slots were filled
    assert len(p3["tools"]) == 2 and len(p3["messages"]) == 8  # system, 3 pairs, user
