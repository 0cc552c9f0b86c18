"""How fast ModelFormat.render is, next to transformers and next to a hand-written f-string.

    python benchmarks/bench_model_format.py            # full run
    python benchmarks/bench_model_format.py --quick    # a few iterations (used by the test suite)

P4: the Qwen2.5 template, a system prompt, 3 history pairs, the current user turn
and 2 tools: ``fmt.render`` against transformers' ``apply_chat_template(tokenize=False)``
on a tokenizer that carries the same template (the outputs are asserted equal).
Bar: ours at least 10x faster.

F1: a fixed-string family (ChatML, then Llama 3) against a hand-written f-string
builder of the same bytes. Bar: within 3x.

Timings are microseconds per call, the median of several repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prompter.formats.model_format import ModelFormat  # noqa: E402

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
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
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
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    },
]

MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant that answers briefly."},
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "And of Italy?"},
    {"role": "assistant", "content": "Rome."},
    {"role": "user", "content": "And of Spain?"},
    {"role": "assistant", "content": "Madrid."},
    {"role": "user", "content": "What is the weather in Paris today?"},
]


def per_call_us(fn: Callable[[], Any], number: int, repeat: int) -> float:
    """Median over ``repeat`` runs of the mean time of ``number`` calls, in microseconds."""
    fn()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - start) / number * 1e6)
    return statistics.median(runs)


def transformers_renderer(fmt: ModelFormat) -> Callable[[], str] | None:
    try:
        import tokenizers
        import transformers
    except ImportError:
        return None
    specials = {k: v for k, v in (("bos_token", fmt.bos_token), ("eos_token", fmt.eos_token)) if v}
    model = tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer(model), **specials)
    tok.chat_template = fmt.chat_template

    def render() -> str:
        return tok.apply_chat_template(MESSAGES, tools=TOOLS, add_generation_prompt=True, tokenize=False)

    return render


def chatml_fstring(messages: list[dict[str, str]]) -> str:
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + (
        "<|im_start|>assistant\n"
    )


def llama3_fstring(messages: list[dict[str, str]]) -> str:
    body = "".join(
        f"<|start_header_id|>{m['role']}<|end_header_id|>\n\n{m['content'].strip()}<|eot_id|>" for m in messages
    )
    return f"<|begin_of_text|>{body}<|start_header_id|>assistant<|end_header_id|>\n\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few iterations, to check the script runs")
    args = parser.parse_args(argv)
    number, repeat = (20, 3) if args.quick else (2000, 7)
    slow_number = 5 if args.quick else 200

    rows: list[tuple[str, str, float, str, float, float, str]] = []

    qwen = ModelFormat.get("qwen2.5")
    ours = qwen.render(MESSAGES, tools=TOOLS)
    reference = transformers_renderer(qwen)
    t_ours = per_call_us(lambda: qwen.render(MESSAGES, tools=TOOLS), number, repeat)
    if reference is not None:
        assert reference() == ours, "P4: prompter and transformers disagree"
        t_ref = per_call_us(reference, slow_number, repeat)
        ratio = t_ref / t_ours
        rows.append(("P4 qwen2.5 + 2 tools", "prompter", t_ours, "transformers", t_ref, ratio, ">= 10x faster"))
    else:
        rows.append(("P4 qwen2.5 + 2 tools", "prompter", t_ours, "transformers (missing)", 0.0, 0.0, "-"))

    forced = per_call_us(lambda: qwen.render(MESSAGES, tools=TOOLS, _force_template=True), slow_number, repeat)
    rows.append(("P4 via the jinja template", "prompter", forced, "prompter fast path", t_ours, forced / t_ours, "-"))

    plain = [m for m in MESSAGES]
    for family, builder in (("chatml", chatml_fstring), ("llama-3", llama3_fstring)):
        fmt = ModelFormat.get(family)
        assert fmt.render(plain) == builder(plain), f"{family}: the f-string builder disagrees"
        t_fmt = per_call_us(lambda fmt=fmt: fmt.render(plain), number, repeat)
        t_f = per_call_us(lambda builder=builder: builder(plain), number, repeat)
        rows.append((f"F1 {family} fixed strings", "prompter", t_fmt, "f-string", t_f, t_fmt / t_f, "<= 3x slower"))

    header = ("case", "ours", "us/call", "other", "us/call", "ratio", "bar")
    table = [header] + [(c, o, f"{a:.1f}", n, f"{b:.1f}", f"{r:.1f}x", bar) for c, o, a, n, b, r, bar in rows]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))
    print("\nratio: P4 = transformers / prompter (higher is better); F1 = prompter / f-string (lower is better)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
