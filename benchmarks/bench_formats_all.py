"""Every shipped family against transformers, in the same run: ratios, byte equality, linearity.

    python benchmarks/bench_formats_all.py             # full run
    python benchmarks/bench_formats_all.py --quick     # a few iterations (used by the test suite)
    python benchmarks/bench_formats_all.py --family qwen3 --family gemma-3

For each of the 40 templates in ``prompter/formats/chat_templates/`` and each case
(1, 3 and 10 user turns, with and without a system message, with and without tools
where the template reads ``tools``, and with tools also an agent step: an assistant tool call
and the tool's result after the last question, case ``+call``): ``ModelFormat.render`` against transformers'
``render_jinja_template`` on the same template and the same tokens; the two texts are
compared byte for byte (a case transformers itself refuses — a template that raises on a
system message — is listed as ``refused``, not timed). Two families render on purpose what
raw transformers loses: Mistral v0.3's template drops a system message (prompter folds its
text into the first user turn) and GLM-4's reads tools only from the system message
(prompter puts them there); those cases are compared with transformers given the equivalent
input, and say so. Bar: every ratio >= 10x.

Linearity: the cost of 1, 10, 100 and 1,000 turns, for every family's format and for a
``ChatPrompter`` bound to a few of them; the bar is cost(1000) / cost(10) close to 100
(anything up to 150 counts as linear here: the join of a long text is memory-bound).

Timings are microseconds per call, the fastest of several repeats (the least disturbed by other load); ratios are
transformers / prompter, so higher is better.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prompter.formats.fixed import template_source  # noqa: E402
from prompter.formats.model_format import ModelFormat  # noqa: E402
from prompter.formats.sandbox import compile_template  # noqa: E402

TEMPLATES = Path(__file__).resolve().parent.parent / "prompter" / "formats" / "chat_templates"
FAMILIES = [e["family"] for e in json.loads((TEMPLATES / "index.json").read_text(encoding="utf-8"))]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city name"},
                    "unit": {"type": "string", "description": "The unit of temperature", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the web.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "The search query"}},
                "required": ["query"],
            },
        },
    },
]
SYSTEM = "You are a helpful assistant that answers briefly."


def conversation(turns: int, system: bool, variant: int = 0) -> list[dict[str, str]]:
    """``turns`` user messages, an assistant answer between each two, a system message first if asked;
    ``variant`` > 0 changes the text of every message (the same shape, other words)."""
    tag = f" (take {variant})" if variant else ""
    messages = [{"role": "system", "content": SYSTEM + tag}] if system else []
    for i in range(turns):
        if i:
            messages.append({"role": "assistant", "content": f"Answer number {i}: Paris is the capital.{tag}"})
        messages.append({"role": "user", "content": f"Question {i + 1}: what is the capital of France?{tag}"})
    return messages


def agent_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` (ending with a user question) plus a typical agent step: the assistant calls a
    tool and the tool's result follows (the model is then asked for its answer)."""
    call = {
        "id": "abc123XYZ",  # nine letters and digits: Mistral's templates insist
        "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
    }
    return [
        *messages,
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "abc123XYZ", "name": "get_weather", "content": '{"temperature": 21}'},
    ]


def per_call_us(fn: Callable[[], Any], number: int, repeat: int) -> float:
    """The fastest of ``repeat`` runs of the mean time of ``number`` calls, in microseconds."""
    for _ in range(3):
        fn()
    runs = []
    gc.disable()  # as timeit does: a collection landing in one run would not be the code's cost
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            runs.append((time.perf_counter() - start) / number * 1e6)
    finally:
        gc.enable()
    return min(runs)


def paired_us(ours: Callable[[], Any], theirs: Callable[[], Any], number: int, slow: int, repeat: int) -> tuple[float, float]:
    """Both sides timed in turn, ``repeat`` rounds, the fastest round of each (microseconds per call):
    load from other processes then hits both sides alike instead of skewing the ratio."""
    for _ in range(3):
        ours()
        theirs()
    best = [float("inf"), float("inf")]
    gc.disable()
    try:
        for _ in range(repeat):
            for side, (fn, count) in enumerate(((ours, number), (theirs, slow))):
                start = time.perf_counter()
                for _ in range(count):
                    fn()
                best[side] = min(best[side], (time.perf_counter() - start) / count * 1e6)
    finally:
        gc.enable()
    return best[0], best[1]


def reads_tools(fmt: ModelFormat) -> bool:
    source = template_source(fmt, TOOLS)
    return source is not None and compile_template(source).uses("tools")


def equivalent_input(family: str, messages: list[dict[str, Any]], tools: Any) -> tuple[Any, Any, str] | None:
    """Where prompter deliberately renders what raw transformers would lose (docs/model-formats.md,
    "What prompter normalises"), the input that makes transformers render the same thing, and why;
    None elsewhere. Built here from the documented rules, not with prompter's own functions."""
    if family == "mistral-v0.3-tools" and messages and messages[0]["role"] == "system":
        # the template renders without the system text: prompter folds it into the first user turn
        first = {"role": "user", "content": messages[0]["content"] + "\n\n" + messages[1]["content"]}
        return [first, *messages[2:]], tools, "system text folded (the template drops it)"
    if family == "glm-4" and tools:
        # the template reads tools from the system message's "tools" key, never from `tools`
        if messages and messages[0]["role"] == "system":
            head = [{**messages[0], "tools": tools}]
            rest = messages[1:]
        else:
            head, rest = [{"role": "system", "content": "", "tools": tools}], messages
        return [*head, *rest], None, "tools given in the system message (where the template reads them)"
    return None


def transformers_render(fmt: ModelFormat, messages: Any, tools: Any) -> Callable[[], str]:
    from transformers.utils.chat_template_utils import render_jinja_template

    specials = {k: v for k, v in (("bos_token", fmt.bos_token), ("eos_token", fmt.eos_token)) if v is not None}
    source = template_source(fmt, tools)

    def render() -> str:
        out = render_jinja_template(
            [messages], tools=tools, chat_template=source, add_generation_prompt=True, **specials
        )
        text = out[0] if isinstance(out, tuple) else out
        return str(text[0] if isinstance(text, list) else text)

    return render


FRESH = 8
"""Conversations of one shape with other words, rendered in turn for the ``fresh`` column."""

Case = tuple[str, list[dict[str, Any]], Any, list[list[dict[str, Any]]]]


def cases(fmt: ModelFormat) -> list[Case]:
    """Every case of ``fmt``: with tools (where the template reads them) also an agent step in
    the history (``+call``: an assistant tool call and the tool's result, :func:`agent_turn`);
    each with :data:`FRESH` variants of other words."""
    found: list[Case] = []
    tooled = reads_tools(fmt)
    for tools in (None, TOOLS) if tooled else (None,):
        for system in (False, True):
            for turns in (1, 3, 10):
                name = f"{turns}t{' sys' if system else ''}{' tools' if tools else ''}"
                variants = [conversation(turns, system, v) for v in range(1, FRESH + 1)]
                found.append((name, conversation(turns, system), tools, variants))
                if tools is not None:
                    agent = [agent_turn(v) for v in variants]
                    found.append((name + "+call", agent_turn(conversation(turns, system)), tools, agent))
    return found


def in_turn(fmt: ModelFormat, variants: list[list[dict[str, Any]]], tools: Any) -> Callable[[], str]:
    """A render of the next variant each call: never the conversation rendered just before."""
    state = [0]

    def render() -> str:
        state[0] = (state[0] + 1) % len(variants)
        return fmt.render(variants[state[0]], tools=tools)

    return render


def compare(families: list[str], number: int, slow_number: int, repeat: int) -> tuple[dict[str, float], dict[str, float]]:
    """Print one row per family and case; return each family's smallest ratio, repeated and fresh."""
    worst: dict[str, float] = {}
    worst_fresh: dict[str, float] = {}
    print(
        f"{'family':<20} {'case':<18} {'ours us':>9} {'hf us':>9} {'ratio':>8} {'fresh us':>9} {'fresh':>7}  bytes"
    )
    for family in families:
        fmt = ModelFormat.get(family)
        for name, messages, tools, variants in cases(fmt):
            reference = transformers_render(fmt, messages, tools)
            note = ""
            try:
                expected = reference()
            except Exception as exc:  # noqa: BLE001 - transformers refusing the case is a result
                print(f"{family:<20} {name:<18} {'':>9} {'':>9} {'':>8}  refused by transformers: {type(exc).__name__}")
                continue
            ours = fmt.render(messages, tools=tools)
            equivalent = equivalent_input(family, messages, tools) if ours != expected else None
            if equivalent is not None:
                reference = transformers_render(fmt, equivalent[0], equivalent[1])
                expected = reference()
                note = f" (deliberate: {equivalent[2]}; transformers given the equivalent input)"
            same = ("same" if ours == expected else "DIFFERENT") + note
            for variant in variants:  # the fresh column's conversations render the template's bytes too
                wanted = equivalent_input(family, variant, tools) if equivalent is not None else (variant, tools, "")
                assert wanted is not None
                if fmt.render(variant, tools=tools) != transformers_render(fmt, wanted[0], wanted[1])():
                    same = "DIFFERENT (fresh)"
            t_ours, t_ref = paired_us(
                lambda f=fmt, m=messages, t=tools: f.render(m, tools=t), reference, number, slow_number, repeat
            )
            t_fresh, t_ref2 = paired_us(in_turn(fmt, variants, tools), reference, number, slow_number, repeat)
            ratio, fresh = t_ref / t_ours, t_ref2 / t_fresh
            ok = same.startswith("same")
            worst[family] = min(worst.get(family, ratio), ratio if ok else 0.0)
            worst_fresh[family] = min(worst_fresh.get(family, fresh), fresh if ok else 0.0)
            print(
                f"{family:<20} {name:<18} {t_ours:9.1f} {t_ref:9.1f} {ratio:7.1f}x {t_fresh:9.1f} {fresh:6.1f}x  {same}"
            )
    return worst, worst_fresh


def linearity(families: list[str], repeat: int) -> list[tuple[str, float]]:
    """cost(1000 turns) / cost(10 turns) for each family's format and a few bound prompters."""
    from prompter import ChatPrompter

    rows: list[tuple[str, float]] = []
    print(f"\n{'linearity':<28} {'1':>9} {'10':>9} {'100':>9} {'1000':>10}  1000/10")
    for family in families:
        fmt = ModelFormat.get(family)
        costs = []
        for turns in (1, 10, 100, 1000):
            messages = conversation(turns, True)
            number = max(2, 2000 // turns)
            costs.append(per_call_us(lambda fmt=fmt, messages=messages: fmt.render(messages), number, repeat))
        rows.append((f"format {family}", costs[3] / costs[1]))
        print(f"{'format ' + family:<28} " + " ".join(f"{c:9.1f}" for c in costs) + f"  {costs[3] / costs[1]:6.1f}x")
    prompter = ChatPrompter("You answer questions.")
    for family in [None, *[f for f in ("qwen2.5", "llama-3.1", "gemma-3") if f in families]]:
        costs = []
        for turns in (1, 10, 100, 1000):
            history = [[f"question {i}", f"answer {i}"] for i in range(turns - 1)]
            number = max(2, 2000 // turns)

            def call(history: Any = history, family: str | None = family) -> str:
                return prompter.generate_prompt("last question", history=history, model_format=family)

            costs.append(per_call_us(call, number, repeat))
        label = f"prompter {family or 'generic'}"
        rows.append((label, costs[3] / costs[1]))
        print(f"{label:<28} " + " ".join(f"{c:9.1f}" for c in costs) + f"  {costs[3] / costs[1]:6.1f}x")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few iterations, to check the script runs")
    parser.add_argument("--family", action="append", help="only this family (repeatable)")
    parser.add_argument("--no-linearity", action="store_true", help="skip the 1..1000-turn scan")
    args = parser.parse_args(argv)
    families = args.family or FAMILIES
    number, slow_number, repeat = (5, 2, 1) if args.quick else (300, 20, 9)
    worst, worst_fresh = compare(families, number, slow_number, repeat)
    print(f"\n{'family':<20} {'min ratio':>9} {'min fresh':>10}")
    for family in families:
        if family in worst:
            low = min(worst[family], worst_fresh[family])
            flag = "" if low >= 15 else "   < 15x" if low >= 10 else "   < 10x"
            print(f"{family:<20} {worst[family]:8.1f}x {worst_fresh[family]:9.1f}x{flag}")
    if not args.no_linearity:
        linearity(families if not args.quick else families[:2], 1 if args.quick else 3)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
