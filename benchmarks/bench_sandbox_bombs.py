"""Wall time and peak memory of every jinja bomb, each in a fresh process.

    python benchmarks/bench_sandbox_bombs.py              # every bomb of tests/formats/test_sandbox_bombs.py
    python benchmarks/bench_sandbox_bombs.py sort lipsum  # only the bombs whose id contains a word

Each bomb is rendered by ``ModelFormat(chat_template=...).render`` with the default
budget in a child process whose address space is capped (so a bomb that escapes the
sandbox cannot take the machine down; it then shows as ``MemoryError`` or ``killed``).
Reported per bomb: the exception type that came out, the wall time of the render, and
the child's peak RSS (``ru_maxrss``) next to its RSS just before the render, in MB.
Bars (issue 8): every bomb ends in a ``PromptError`` subclass within 2 s, peak RSS
under 512 MB.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "formats"))

ADDRESS_SPACE_CAP = 3 << 30
"""The child's address-space limit: far above the 512 MB bar, far below the machine."""

WALL_LIMIT = 15.0
"""Seconds after which a child is killed and reported as such."""


def _child(source: str) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_CAP, ADDRESS_SPACE_CAP))
    from prompter.errors import PromptError
    from prompter.formats.model_format import ModelFormat

    ModelFormat(chat_template="{{ messages[0].content }}").render([{"role": "user", "content": "hi"}])  # warm jinja
    fmt = ModelFormat(chat_template=source)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    outcome = "ok"
    try:
        fmt.render([{"role": "user", "content": "hi"}])
    except PromptError as exc:
        outcome = f"{type(exc).__name__}: {str(exc)[:70]}"
    except BaseException as exc:  # noqa: BLE001 - reporting what escaped is the point
        outcome = f"UNTYPED {type(exc).__name__}"
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"outcome": outcome, "wall_s": elapsed, "rss_before_mb": before / 1024, "peak_mb": peak / 1024}))


def _run(source: str) -> dict[str, object]:
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "--child"],
            input=source,
            capture_output=True,
            text=True,
            timeout=WALL_LIMIT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"outcome": f"killed after {WALL_LIMIT:.0f} s", "wall_s": WALL_LIMIT, "peak_mb": float("nan")}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode or not lines:
        return {"outcome": f"crashed rc={proc.returncode} {proc.stderr.strip()[-80:]}", "wall_s": float("nan"),
                "peak_mb": float("nan")}
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def main(words: list[str]) -> int:
    from test_sandbox_bombs import ALL_BOMBS

    worst_wall = worst_peak = 0.0
    failures = 0
    for name, source in ALL_BOMBS.items():
        if words and not any(w in name for w in words):
            continue
        r = _run(source)
        wall, peak = float(r["wall_s"]), float(r["peak_mb"])  # type: ignore[arg-type]
        bad = not str(r["outcome"]).startswith("Template") or not wall < 2 or not peak < 512
        failures += bad
        worst_wall, worst_peak = max(worst_wall, wall), max(worst_peak, peak)
        print(f"{'FAIL' if bad else 'ok  '} {name:38} {wall:7.3f} s {peak:8.1f} MB  {r['outcome']}", flush=True)
    print(f"worst wall {worst_wall:.3f} s, worst peak RSS {worst_peak:.1f} MB, {failures} over a bar")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.stdin.read())
    else:
        sys.exit(main(sys.argv[1:]))
