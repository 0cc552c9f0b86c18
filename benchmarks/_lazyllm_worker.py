"""Times LazyLLM's prompters on the benchmark's cases; run by bench_prompter.py in LazyLLM's own venv.

Reads the cases as JSON on stdin (the same instruction, slots, tools, history
and inputs the prompter side uses), prints one JSON object on stdout:
``{"version": ..., "results": {"P1": {"us": ..., "output": ...}, ...}, "notes": [...]}``.
It imports nothing from this repository, so it runs with any Python that has
``lazyllm`` installed (see setup_lazyllm.sh).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

# LazyLLM's generic prompter has no tool-call tokens; with tools in text mode its
# function-call preamble then keeps {tool_start_token}-style placeholders, which it
# counts as instruction slots and asserts on. A module bound to a model sets these
# tokens; we bind neutral ones so the text case can run at all.
TOOL_TOKENS = {
    "tool_start_token": "<tool_call>",
    "tool_args_token": "<args>",
    "tool_end_token": "</tool_call>",
}


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def _timing(number: int, repeat: int, clock: str) -> Callable[[Callable[[], Any]], float]:
    """A function giving the median us per call of its argument (the same method as bench_prompter)."""

    def per_call_us(func: Callable[[], Any]) -> float:
        times = timeit.repeat(func, number=number, repeat=repeat, timer=CLOCKS[clock])
        return statistics.median(times) / number * 1e6

    return per_call_us


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=repr))


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Time P1/P2/P3 with LazyLLM as ``spec`` describes; see the module docstring."""
    from lazyllm import __version__
    from lazyllm.components.prompter import AlpacaPrompter, ChatPrompter

    per_call_us = _timing(int(spec["number"]), int(spec["repeat"]), spec.get("clock", "cpu"))
    notes: list[str] = []
    results: dict[str, Any] = {}

    # P1 (LazyLLM deep-copies the input itself, so the same dict can be passed every call)
    p1 = spec["P1"]
    alpaca = AlpacaPrompter(p1["instruction"])
    p1_input = p1["input"]
    results["P1"] = {
        "us": per_call_us(lambda: alpaca.generate_prompt(p1_input)),
        "output": alpaca.generate_prompt(p1_input),
    }

    chat_spec = spec["chat"]
    chat = ChatPrompter(chat_spec["instruction"], tools=chat_spec["tools"])
    history, text = chat_spec["history"], chat_spec["input"]

    def p2() -> Any:
        return chat.generate_prompt(text, history=history)

    try:
        p2()
    except AssertionError:
        chat._set_model_configs(**TOOL_TOKENS)
        notes.append(
            "P2: unbound ChatPrompter with tools fails in text mode (AssertionError on its own "
            "{tool_start_token} placeholders); bound neutral tool tokens as a model would"
        )
    results["P2"] = {"us": per_call_us(p2), "output": p2()}

    def p3() -> Any:
        return chat.generate_prompt(text, history=history, format="openai")

    results["P3"] = {"us": per_call_us(p3), "output": _jsonable(p3())}
    return {"version": __version__, "results": results, "notes": notes}


def main() -> int:
    spec = json.loads(sys.stdin.read())
    json.dump(run(spec), sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
