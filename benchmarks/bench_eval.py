"""Rendering an evaluation at scale: prompter against the real OpenCompass 0.5.4, in one run.

A 5-shot gen config (dialogue ice and prompt templates, FixKRetriever, a chat meta
template) is rendered for N samples by prompter in compat mode, by prompter in its
default mode, and by OpenCompass itself (in its own venv, see bench_eval_setup.py).
The compat-mode prompts must equal OpenCompass's, text for text; the script prints
the CPU seconds of each (best of three for prompter; OpenCompass renders once), the
ratios, and prompter's time at N/10 and N (linearity).

    python benchmarks/bench_eval.py              # N = 10000
    python benchmarks/bench_eval.py --samples 2000 --opencompass-python .opencompass-venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prompter.templates import MetaTemplate, PromptTemplate  # noqa: E402
from prompter.templates.batch import render_prompts  # noqa: E402
from prompter.templates.retrievers import FixKRetriever  # noqa: E402

ICE = {"round": [{"role": "HUMAN", "prompt": "Question: {question}"}, {"role": "BOT", "prompt": "Answer: {answer}"}]}
PROMPT = {
    "begin": [{"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "Solve the following questions."}, "</E>"],
    "round": [{"role": "HUMAN", "prompt": "Question: {question}"}, {"role": "BOT", "prompt": "Answer: {answer}"}],
}
META = {
    "round": [
        {"role": "HUMAN", "begin": "<|im_start|>user\n", "end": "<|im_end|>\n"},
        {"role": "BOT", "begin": "<|im_start|>assistant\n", "end": "<|im_end|>\n", "generate": True},
    ],
    "reserved_roles": [{"role": "SYSTEM", "begin": "<|im_start|>system\n", "end": "<|im_end|>\n"}],
}
SHOTS = [0, 1, 2, 3, 4]


def samples(n: int) -> list[dict[str, Any]]:
    return [{"question": f"What is {i} + {i * 7 % 13}?", "answer": str(i + i * 7 % 13)} for i in range(n)]


def render_prompter(tests: list[dict[str, Any]], index: list[dict[str, Any]], compat: Any) -> tuple[float, list[str]]:
    """The batch path the inferencers use: every object built afresh, nothing kept between runs."""
    start = time.process_time()
    ice_t = PromptTemplate(ICE, compat=compat)
    prompt_t = PromptTemplate(PROMPT, ice_token="</E>", compat=compat)
    retriever = FixKRetriever(index, fix_id_list=SHOTS, output_column="answer", compat=compat)
    meta = MetaTemplate(**META, compat=compat)  # type: ignore[arg-type]
    out = render_prompts(retriever, tests, meta, ice_template=ice_t, prompt_template=prompt_t)
    return time.process_time() - start, out


def render_per_sample(tests: list[dict[str, Any]], index: list[dict[str, Any]], compat: Any) -> tuple[float, list[str]]:
    """The sample-by-sample path (OpenCompass's own loop), for reference."""
    start = time.process_time()
    ice_t = PromptTemplate(ICE, compat=compat)
    prompt_t = PromptTemplate(PROMPT, ice_token="</E>", compat=compat)
    retriever = FixKRetriever(index, fix_id_list=SHOTS, output_column="answer", compat=compat)
    meta = MetaTemplate(**META, compat=compat)  # type: ignore[arg-type]
    out = []
    for entry, ids in zip(tests, retriever.retrieve(tests), strict=True):
        ice = retriever.generate_ice(ids, ice_t)
        prompt = retriever.generate_prompt(entry, ice, ice_template=ice_t, prompt_template=prompt_t)
        out.append(meta.parse(prompt, mode="gen"))
    return time.process_time() - start, out


def render_opencompass(python: str, tests: list[dict[str, Any]], index: list[dict[str, Any]]) -> dict[str, Any]:
    spec = {
        "index": index,
        "tests": tests,
        "ice_template": ICE,
        "prompt_template": PROMPT,
        "meta_template": META,
        "fix_id_list": SHOTS,
    }
    done = subprocess.run(
        [python, str(ROOT / "benchmarks" / "bench_eval_opencompass_worker.py")],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        cwd="/tmp",
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--opencompass-python", default=str(ROOT / ".opencompass-venv" / "bin" / "python"))
    args = parser.parse_args()
    index = samples(10)
    tests = samples(args.samples)
    # CPU seconds, best of three: the machine may be shared, and CPU time is what rendering costs
    runs = [render_prompter(tests, index, "opencompass") for _ in range(3)]
    t_compat, compat_out = min(r[0] for r in runs), runs[0][1]
    t_default = min(render_prompter(tests, index, None)[0] for _ in range(3))
    t_tenth = min(render_prompter(tests[: args.samples // 10], index, "opencompass")[0] for _ in range(3))
    t_tenth_default = min(render_prompter(tests[: args.samples // 10], index, None)[0] for _ in range(3))
    t_slow, slow_out = render_per_sample(tests, index, "opencompass")
    report: dict[str, Any] = {
        "samples": args.samples,
        "prompter_compat_s": round(t_compat, 3),
        "prompter_default_s": round(t_default, 3),
        "prompter_compat_tenth_s": round(t_tenth, 3),
        "prompter_default_tenth_s": round(t_tenth_default, 3),
        "linearity_ratio_n_over_tenth": round(t_compat / max(t_tenth, 1e-9), 2),
        "linearity_ratio_default": round(t_default / max(t_tenth_default, 1e-9), 2),
        "prompter_per_sample_compat_s": round(t_slow, 3),
        "batch_equals_per_sample": slow_out == compat_out,
    }
    if Path(args.opencompass_python).exists():
        upstream = render_opencompass(args.opencompass_python, tests, index)
        equal = sum(a == b for a, b in zip(compat_out, upstream["prompts"], strict=True))
        report.update(
            opencompass_version=upstream["version"],
            opencompass_s=round(upstream["seconds"], 3),
            identical_prompts=f"{equal}/{len(tests)}",
            speedup_compat=round(upstream["seconds"] / t_compat, 2),
            speedup_default=round(upstream["seconds"] / t_default, 2),
        )
    else:
        report["opencompass"] = "not installed: python benchmarks/bench_eval_setup.py"
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
