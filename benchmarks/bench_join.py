"""Benchmark a join pass of the engine: running rows decode while new prompts join, on the tiny model.

Measures, in one run on whatever machine runs it, the median time of one pass of
:meth:`~modules.local.engines.kv_slots.Slots.step_and_join` in which *J* prompts
join 32 running rows (their openings cached, as a shared system prompt is):

* with the joiners' attention in one SDPA call per layer (what the engine does,
  :class:`~modules.local.engines.slot_attention.Joiners`);
* with one call per joiner (the layout switched off for the measurement);

and reports each as a ratio of a plain decoding step of the same rows, and the
first against the second. Both give the same greedy tokens (checked each pass).

::

    python benchmarks/bench_join.py            # J = 1, 8, 32, 60 (about a minute on 2 cores)
    python benchmarks/bench_join.py --quick    # a smoke run (seconds)
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def run(quick: bool = False) -> dict[int, dict[str, float]]:
    """The figures per number of joiners (also printed)."""
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging

    import modules.local.engines.kv_slots as kv_slots
    from modules.local.engines.kv_slots import Slots
    from modules.local.engines.prefix_cache import PrefixCache
    from modules.local.tiny_model import cached_tiny_model

    logging.disable_progress_bar()
    torch.set_num_threads(1)  # as the engine process runs the tiny model
    model = AutoModelForCausalLM.from_pretrained(cached_tiny_model()).eval()
    rng = random.Random(0)
    opening = [rng.randrange(10, 1000) for _ in range(36)]

    def prompt() -> list[int]:
        return opening + [rng.randrange(10, 1000) for _ in range(29 + rng.randrange(3))]

    def one_pass(joiners: int, together: bool) -> tuple[float, float, list[int]]:
        slots = Slots(model, PrefixCache())
        slots.step_and_join([prompt() for _ in range(32)])
        slots.step_and_join([prompt() for _ in range(2)])  # the opening is cached from here on
        start = time.perf_counter()
        slots.step()
        step = time.perf_counter() - start
        wave = [prompt() for _ in range(joiners)]
        layout = kv_slots.Joiners.__dict__["of"]  # the classmethod itself, put back as it was
        if not together:
            kv_slots.Joiners.of = staticmethod(lambda *args: None)  # type: ignore[method-assign,assignment]
        try:
            start = time.perf_counter()
            logits = slots.step_and_join(wave)
            join = time.perf_counter() - start
        finally:
            kv_slots.Joiners.of = layout  # type: ignore[method-assign]
        return join, step, [int(t) for t in logits.argmax(-1)]

    results: dict[int, dict[str, float]] = {}
    reps = 3 if quick else 15
    with torch.inference_mode():
        for joiners in (1, 8) if quick else (1, 8, 32, 60):
            at_once: list[float] = []
            each: list[float] = []
            steps: list[float] = []
            for _ in range(reps):
                state = rng.getstate()
                join, step, tokens = one_pass(joiners, together=True)
                rng.setstate(state)  # the same prompts, joined the other way
                join_each, _, tokens_each = one_pass(joiners, together=False)
                if tokens != tokens_each:
                    raise AssertionError(f"{joiners} joiners: the two ways gave different tokens")
                at_once.append(join)
                each.append(join_each)
                steps.append(step)
            step_ms = _median_ms(steps)
            results[joiners] = {
                "step_ms": round(step_ms, 2),
                "join_ms": round(_median_ms(at_once), 2),
                "join_each_ms": round(_median_ms(each), 2),
                "join_x_step": round(_median_ms(at_once) / step_ms, 2),
                "join_each_x_step": round(_median_ms(each) / step_ms, 2),
                "each_x_at_once": round(_median_ms(each) / _median_ms(at_once), 2),
            }
    print("  joiners  step ms  join ms (x step)   one call each ms (x step)   one call each / at once")
    for joiners, row in results.items():
        print(
            f"  {joiners:7d}  {row['step_ms']:7.2f}  {row['join_ms']:7.2f} ({row['join_x_step']:5.2f}x)"
            f"  {row['join_each_ms']:14.2f} ({row['join_each_x_step']:5.2f}x)  {row['each_x_at_once']:22.2f}x"
        )
    return results


def _figures(row: dict[str, Any]) -> bool:
    return all(value > 0 for value in row.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer joiners and repetitions")
    args = parser.parse_args()
    results = run(quick=args.quick)
    if not all(_figures(row) for row in results.values()):
        raise SystemExit("a figure was not positive")


if __name__ == "__main__":
    main()
