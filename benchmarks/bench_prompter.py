"""How fast prompter renders, next to hand-written code and LazyLLM 1.4.0.

Three cases, each timed as microseconds per call (median of ``--repeat``
timeit runs of ``--number`` calls, prompter's and the hand-written runs
interleaved):

* P1: ``AlpacaPrompter("Answer about {topic} using {context}.")`` with a dict
  filling both slots, to the string;
* P2: ``ChatPrompter`` with an instruction, two tools locked at construction,
  three history pairs and a str input, to the string;
* P3: the same, to the OpenAI body (``return_dict=True``).

Each runs next to a hand-written function that builds the same bytes from the
DESIGN.md contract (checked equal before timing; constants such as the tools'
JSON are precomputed, as a careful engineer would), and, when
``.lazyllm-venv`` exists (``benchmarks/setup_lazyllm.sh``), next to LazyLLM's
own ``generate_prompt`` doing the same work in a subprocess of that venv.
LazyLLM's bytes differ from ours (DESIGN.md wins); only the work is the same.

Also timed: ``python -c "import prompter"`` in fresh subprocesses, minus a
bare ``python -c pass``.

The clock is CPU time by default (``time.process_time``; for the import, the
children's user+sys time): on a shared machine, wall-clock timings also count
the scheduler's time slices given to other processes, which swamps
sub-microsecond work. ``--wall`` uses ``time.perf_counter`` and wall-clock
import time instead; both import figures are printed either way.

    .venv/bin/python benchmarks/bench_prompter.py            # full run
    .venv/bin/python benchmarks/bench_prompter.py --quick    # seconds; no LazyLLM, quick import timing

Importable: ``run()`` returns a :class:`Report`, ``format_report()`` prints it;
``check_outputs()`` asserts the hand-written functions match prompter.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from prompter import AlpacaPrompter, ChatPrompter  # noqa: E402

LAZYLLM_PYTHON = ROOT / ".lazyllm-venv" / "bin" / "python"
WORKER = Path(__file__).resolve().parent / "_lazyllm_worker.py"

# ---- the cases ---------------------------------------------------------------------------------

SYSTEM = "You are a helpful assistant."
"""Passed as ``system=`` so the run does not depend on PROMPTER_DEFAULT_SYSTEM."""

P1_INSTRUCTION = "Answer about {topic} using {context}."
P1_INPUT = {
    "topic": "cats",
    "context": "Cats purr at 25-150 Hz, both when inhaling and exhaling, often when content.",
}

CHAT_INSTRUCTION = "You are a travel agent. Answer briefly and call a tool when you need live data."
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name, e.g. Zürich"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_flights",
            "description": "Flights between two airports on a date.",
            "parameters": {
                "type": "object",
                "properties": {
                    "origin": {"type": "string"},
                    "destination": {"type": "string"},
                    "date": {"type": "string", "format": "date"},
                },
                "required": ["origin", "destination", "date"],
            },
        },
    },
]
HISTORY = [
    ["I want to go somewhere warm in March.", "Lisbon, Seville and Malta are mild in March."],
    ["Which one is cheapest to fly to from Berlin?", "Usually Lisbon; I can check live fares."],
    ["Is it rainy there?", "March averages about 8 rainy days in Lisbon."],
]
CHAT_INPUT = "Find me a flight from Berlin to Lisbon on 2026-03-14."

# ---- hand-written equivalents (the DESIGN.md contract, typed out) ------------------------------

_ALPACA_PREAMBLE = (
    "Below is an instruction that describes a task, paired with extra messages such as input that provides "
    "further context if possible. Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n"
)
_P1_HEAD = SYSTEM + "\n" + _ALPACA_PREAMBLE + "Answer about "
_P1_TAIL = ".\n\n\n\n### Response:\n"  # end of instruction, "\n\n", no extra keys, "\n", no tools, "\n"


def hand_p1(values: dict[str, str]) -> str:
    """P1 by hand: the Alpaca string with both slots filled."""
    return f"{_P1_HEAD}{values['topic']} using {values['context']}{_P1_TAIL}"


_TOOLS_JSON = json.dumps(TOOLS, ensure_ascii=False)
_CHAT_SYSTEM_TEXT = SYSTEM + "\n" + CHAT_INSTRUCTION + "\n\n"  # instruction + "\n" + no extra keys + "\n"
_P2_HEAD = (
    "<|start_system|>"
    + SYSTEM
    + CHAT_INSTRUCTION
    + "\n\n"
    + "### Function-call Tools. \n\n"
    + _TOOLS_JSON
    + "\n\n"
    + "<|end_system|>\n\n"
)


def hand_p2(text: str, history: list[list[str]]) -> str:
    """P2 by hand: the generic chat string."""
    turns = "".join([f"<|Human|>:{q}<|Assistant|>:{a}" for q, a in history])
    return f"{_P2_HEAD}{turns}\n<|Human|>:\n{text}\n<|Assistant|>:\n"


def hand_p3(text: str, history: list[list[str]]) -> dict[str, Any]:
    """P3 by hand: the OpenAI body (tool dicts shared, the list fresh, as prompter does)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": _CHAT_SYSTEM_TEXT}]
    for q, a in history:
        messages.append({"role": "user", "content": q})
        messages.append({"role": "assistant", "content": a})
    messages.append({"role": "user", "content": text})
    return {"messages": messages, "tools": list(TOOLS)}


# ---- the benchmark -----------------------------------------------------------------------------


@dataclass
class Case:
    """One benchmark row: prompter's call, the hand-written call, and how to describe them."""

    name: str
    title: str
    ours: Callable[[], Any]
    hand: Callable[[], Any]


@dataclass
class Row:
    """Per-call microseconds for one case (``lazyllm_us`` is None when LazyLLM did not run)."""

    name: str
    title: str
    ours_us: float
    hand_us: float
    lazyllm_us: float | None = None

    @property
    def ours_over_hand(self) -> float:
        return self.ours_us / self.hand_us

    @property
    def lazyllm_over_ours(self) -> float | None:
        return None if self.lazyllm_us is None else self.lazyllm_us / self.ours_us


@dataclass
class ImportTiming:
    """Median milliseconds of fresh interpreters: wall clock and CPU (user+sys)."""

    runs: int
    raw_ms: float
    bare_ms: float
    raw_cpu_ms: float
    bare_cpu_ms: float
    clock: str = "cpu"
    """Which pair the bar judges: "cpu" or "wall"."""

    @property
    def net_wall_ms(self) -> float:
        return self.raw_ms - self.bare_ms

    @property
    def net_cpu_ms(self) -> float:
        return self.raw_cpu_ms - self.bare_cpu_ms

    @property
    def net_ms(self) -> float:
        return self.net_cpu_ms if self.clock == "cpu" else self.net_wall_ms


@dataclass
class Report:
    """Everything one run measured."""

    rows: list[Row]
    number: int
    repeat: int
    quick: bool
    clock: str = "cpu"
    lazyllm_number: int = 0
    import_timing: ImportTiming | None = None
    lazyllm_version: str | None = None
    lazyllm_status: str = "not run"
    notes: list[str] = field(default_factory=list)

    def bars(self) -> list[tuple[str, bool | None, str]]:
        """(bar, passed or None when not measured, the measured value)."""
        by_name = {row.name: row for row in self.rows}
        bars: list[tuple[str, bool | None, str]] = []
        ratio = by_name["P1"].lazyllm_over_ours
        bars.append(
            (
                "P1 >= 10x faster than LazyLLM",
                None if ratio is None else ratio >= 10.0,
                "n/a" if ratio is None else f"{ratio:.1f}x",
            )
        )
        for name in ("P2", "P3"):
            ours_hand = by_name[name].ours_over_hand
            bars.append((f"{name} within 3x of hand-written", ours_hand <= 3.0, f"{ours_hand:.2f}x"))
        timing = self.import_timing
        bars.append(
            (
                f"import prompter < 50 ms (net, {self.clock})",
                None if timing is None else timing.net_ms < 50.0,
                "n/a" if timing is None else f"{timing.net_ms:.1f} ms",
            )
        )
        return bars


def build_cases() -> list[Case]:
    """The three cases, prompters constructed once (construction is not timed)."""
    alpaca = AlpacaPrompter(P1_INSTRUCTION, system=SYSTEM)
    chat = ChatPrompter(CHAT_INSTRUCTION, tools=TOOLS, system=SYSTEM)
    p1_input, history, text = P1_INPUT, HISTORY, CHAT_INPUT
    return [
        Case(
            "P1",
            "Alpaca, 2 slots, dict -> str",
            lambda: alpaca.generate_prompt(p1_input),
            lambda: hand_p1(p1_input),
        ),
        Case(
            "P2",
            "Chat, 2 tools, 3 pairs -> str",
            lambda: chat.generate_prompt(text, history=history),
            lambda: hand_p2(text, history),
        ),
        Case(
            "P3",
            "Chat, 2 tools, 3 pairs -> openai",
            lambda: chat.generate_prompt(text, history=history, return_dict=True),
            lambda: hand_p3(text, history),
        ),
    ]


def check_outputs(cases: Sequence[Case] | None = None) -> None:
    """Raise AssertionError unless every hand-written function returns exactly prompter's output."""
    for case in cases or build_cases():
        ours, hand = case.ours(), case.hand()
        if ours != hand or type(ours) is not type(hand):
            message = f"{case.name}: hand-written output differs from prompter's"
            raise AssertionError(f"{message}\n{ours!r}\n{hand!r}")


CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def per_call_us(funcs: Sequence[Callable[[], Any]], number: int, repeat: int, clock: str = "cpu") -> list[float]:
    """For each function, the median over ``repeat`` timeit runs of ``number`` calls, in us per call.

    The functions' runs are interleaved (a, b, a, b, ...) so that a burst of load
    on the machine hits all of them alike.
    """
    timers = [timeit.Timer(func, timer=CLOCKS[clock]) for func in funcs]
    samples: list[list[float]] = [[] for _ in funcs]
    for _ in range(repeat):
        for timer, times in zip(timers, samples):
            times.append(timer.timeit(number))
    return [statistics.median(times) / number * 1e6 for times in samples]


def lazyllm_spec(number: int, repeat: int, clock: str = "cpu") -> dict[str, Any]:
    """What the LazyLLM worker needs: the same instruction, slots, tools, history and input."""
    return {
        "number": number,
        "repeat": repeat,
        "clock": clock,
        "P1": {"instruction": P1_INSTRUCTION, "input": P1_INPUT},
        "chat": {"instruction": CHAT_INSTRUCTION, "tools": TOOLS, "history": HISTORY, "input": CHAT_INPUT},
    }


def run_lazyllm(python: Path, number: int, repeat: int, timeout: float = 600.0, clock: str = "cpu") -> dict[str, Any]:
    """Run the worker under LazyLLM's interpreter; returns its JSON (raises on failure)."""
    proc = subprocess.run(
        [str(python), str(WORKER)],
        input=json.dumps(lazyllm_spec(number, repeat, clock)),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(WORKER.parent),
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")},
    )
    if proc.returncode != 0:
        raise RuntimeError(f"LazyLLM worker exited {proc.returncode}:\n{proc.stderr.strip()[-2000:]}")
    # the last line is the JSON; anything LazyLLM prints on import comes before it
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _one_process_ms(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, user+sys CPU) milliseconds of one run of ``argv``."""
    cpu0, wall0 = _children_cpu_s(), time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    wall, cpu = time.perf_counter() - wall0, _children_cpu_s() - cpu0
    return wall * 1e3, cpu * 1e3


def time_import(runs: int = 10, python: str = sys.executable, clock: str = "cpu") -> ImportTiming:
    """Medians for ``python -c "import prompter"`` and for ``python -c pass``, runs interleaved."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    imp, bare = [python, "-c", "import prompter"], [python, "-c", "pass"]
    # compile the .pyc files first, as installing a package does: the first import would write them,
    # but not where PYTHONDONTWRITEBYTECODE is set, and then every run would pay for compiling
    subprocess.run([python, "-m", "compileall", "-q", str(ROOT / "prompter")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(imp, env=env, check=True)
    raw, base = [], []
    for _ in range(runs):  # interleaved so a burst of load on the shared machine hits both
        raw.append(_one_process_ms(imp, env))
        base.append(_one_process_ms(bare, env))
    return ImportTiming(
        runs,
        raw_ms=statistics.median(wall for wall, _ in raw),
        bare_ms=statistics.median(wall for wall, _ in base),
        raw_cpu_ms=statistics.median(cpu for _, cpu in raw),
        bare_cpu_ms=statistics.median(cpu for _, cpu in base),
        clock=clock,
    )


def run(
    *,
    number: int = 20_000,
    repeat: int = 7,
    quick: bool = False,
    lazyllm: bool = True,
    lazyllm_python: Path = LAZYLLM_PYTHON,
    import_runs: int = 10,
    clock: str = "cpu",
) -> Report:
    """Check outputs, time every case, and return the :class:`Report`."""
    cases = build_cases()
    check_outputs(cases)
    # LazyLLM's calls are slower; fewer of them keep each repeat near the same duration
    lazyllm_number = max(number // 10, 10)
    report = Report(rows=[], number=number, repeat=repeat, quick=quick, clock=clock, lazyllm_number=lazyllm_number)
    for case in cases:
        ours, hand = per_call_us([case.ours, case.hand], number, repeat, clock)
        report.rows.append(Row(case.name, case.title, ours, hand))

    if not lazyllm:
        report.lazyllm_status = "skipped"
    elif not lazyllm_python.exists():
        report.lazyllm_status = f"not installed ({lazyllm_python} missing; run benchmarks/setup_lazyllm.sh)"
    else:
        try:
            result = run_lazyllm(lazyllm_python, lazyllm_number, repeat, clock=clock)
        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as exc:
            report.lazyllm_status = f"failed: {exc}"
        else:
            report.lazyllm_version = result["version"]
            report.lazyllm_status = "ok"
            report.notes.extend(f"LazyLLM {note}" for note in result["notes"])
            for row in report.rows:
                row.lazyllm_us = result["results"][row.name]["us"]

    if import_runs:
        report.import_timing = time_import(import_runs, clock=clock)
    return report


def format_report(report: Report) -> str:
    """The table, ratios and bars as printed text."""
    lazy_head = f"LazyLLM {report.lazyllm_version}" if report.lazyllm_version else "LazyLLM"
    head = (
        f"{'case':<4} {'what':<34} {'prompter':>10} {'hand':>10} {lazy_head:>14} {'ours/hand':>10} {'LazyLLM/ours':>13}"
    )
    clock = "CPU time (process_time)" if report.clock == "cpu" else "wall clock (perf_counter)"
    lines = [
        f"prompter benchmark: us per call, median of {report.repeat} x {report.number} calls"
        + (f" (LazyLLM: x {report.lazyllm_number})" if report.lazyllm_version else "")
        + ("  [QUICK: numbers are not meaningful]" if report.quick else ""),
        f"clock: {clock}; python {sys.version.split()[0]} on {sys.platform}, {os.cpu_count()} CPUs",
        "",
        head,
        "-" * len(head),
    ]
    for row in report.rows:
        lazy = "-" if row.lazyllm_us is None else f"{row.lazyllm_us:.2f}"
        lazy_ratio = row.lazyllm_over_ours
        lines.append(
            f"{row.name:<4} {row.title:<34} {row.ours_us:>10.2f} {row.hand_us:>10.2f} {lazy:>14} "
            f"{row.ours_over_hand:>9.2f}x {'-' if lazy_ratio is None else f'{lazy_ratio:.1f}x':>13}"
        )
    lines.append("")
    lines.append(f"LazyLLM: {report.lazyllm_status}")
    lines.extend(f"  note: {note}" for note in report.notes)
    timing = report.import_timing
    if timing is None:
        lines.append("import prompter: not timed")
    else:
        lines.append(f"import prompter (median of {timing.runs} fresh processes, minus `python -c pass`):")
        lines.append(
            f"  CPU : {timing.raw_cpu_ms:6.1f} ms raw, {timing.bare_cpu_ms:6.1f} ms bare, "
            f"{timing.net_cpu_ms:6.1f} ms net"
        )
        lines.append(
            f"  wall: {timing.raw_ms:6.1f} ms raw, {timing.bare_ms:6.1f} ms bare, {timing.net_wall_ms:6.1f} ms net"
        )
    lines.append("")
    lines.append("bars:")
    for bar, passed, value in report.bars():
        verdict = "n/a " if passed is None else ("PASS" if passed else "FAIL")
        lines.append(f"  {verdict}  {bar:<36} {value}")
    return "\n".join(lines)


def report_dict(report: Report) -> dict[str, Any]:
    """The report as plain JSON-ready data (for collecting several runs)."""
    rows = []
    for row in report.rows:
        ratios = {"ours_over_hand": row.ours_over_hand, "lazyllm_over_ours": row.lazyllm_over_ours}
        rows.append({**vars(row), **ratios})
    timing = report.import_timing
    return {
        "rows": rows,
        "import": None
        if timing is None
        else {**vars(timing), "net_cpu_ms": timing.net_cpu_ms, "net_wall_ms": timing.net_wall_ms},
        "lazyllm_version": report.lazyllm_version,
        "lazyllm_status": report.lazyllm_status,
        "bars": [{"bar": bar, "passed": passed, "value": value} for bar, passed, value in report.bars()],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny N, no LazyLLM, 2 import runs (smoke run)")
    parser.add_argument("--number", type=int, help="calls per repeat (default 20000; quick: 200)")
    parser.add_argument("--repeat", type=int, help="timeit repeats; the median counts (default 7; quick: 3)")
    parser.add_argument("--no-lazyllm", action="store_true", help="do not run the LazyLLM comparison")
    parser.add_argument("--lazyllm-python", type=Path, default=LAZYLLM_PYTHON, help="LazyLLM's python")
    parser.add_argument("--import-runs", type=int, help="fresh processes for the import timing (0: skip)")
    parser.add_argument("--wall", action="store_true", help="time with the wall clock instead of CPU time")
    parser.add_argument("--json", action="store_true", help="also print the report as JSON")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a measured bar fails")
    args = parser.parse_args(argv)

    report = run(
        number=args.number or (200 if args.quick else 20_000),
        repeat=args.repeat or (3 if args.quick else 7),
        quick=args.quick,
        lazyllm=not (args.quick or args.no_lazyllm),
        lazyllm_python=args.lazyllm_python,
        import_runs=args.import_runs if args.import_runs is not None else (2 if args.quick else 10),
        clock="wall" if args.wall else "cpu",
    )
    print(format_report(report))
    if args.json:
        print(json.dumps(report_dict(report)))
    failed = any(passed is False for _, passed, _ in report.bars())
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
