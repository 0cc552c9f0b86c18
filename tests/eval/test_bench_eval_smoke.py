"""The evaluation benchmark's prompter side runs, and compat and default modes agree on its config."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_eval.py"


def test_bench_eval_renders_the_5_shot_config_the_same_in_both_modes() -> None:
    spec = importlib.util.spec_from_file_location("bench_eval", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    index, tests = bench.samples(10), bench.samples(20)
    _, compat = bench.render_prompter(tests, index, "opencompass")
    _, default = bench.render_prompter(tests, index, None)
    assert len(compat) == 20 and compat == default
    assert compat[0].count("<|im_start|>user\n") == 6 and compat[0].endswith("<|im_start|>assistant\n")
