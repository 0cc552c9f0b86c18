"""Throughput of ``prompter serve --engine vllm`` against ``--engine transformers`` on the same GPU.

Needs vLLM and a CUDA GPU (``scripts/gpu_check.sh`` runs it on the device
machine). For each model, each engine is served in its own process, one after
the other (vLLM takes most of the GPU's memory while it runs), and loaded with
the clients of ``bench_server.py`` (asyncio, one keep-alive connection each,
answers checked against the single-client ones): 1 client, then 64. Reported
per engine: requests/s, generated tokens/s, p50/p95 latency and mismatched
answers; and, measured in the same run, vLLM's throughput as a multiple of the
transformers engine's at each level.

Models: ``tiny`` (prompter's tiny qwen2.5 test model, 2 layers of width 64) and
``small`` (the same tokenizer, a randomly initialised qwen2 of 12 layers of width
1024, about 150M parameters), both built locally; nothing is downloaded.

::

    python benchmarks/bench_vllm.py --json out.json
    python benchmarks/bench_vllm.py --models tiny --dtype float32
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "benchmarks"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from bench_server import _throughput  # noqa: E402


def small_model(path: Path) -> Path:
    """A randomly initialised qwen2 of about 150M parameters, with the tiny model's tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    from modules.local.tiny_model import DEFAULT_FAMILY, _model_config, build_tiny_tokenizer

    if (path / "config.json").is_file():
        return path
    tokenizer = build_tiny_tokenizer()
    widths = {"hidden_size": 1024, "intermediate_size": 2816, "num_hidden_layers": 12}
    heads = {"num_attention_heads": 16, "num_key_value_heads": 8, "initializer_range": 0.05}
    config = _model_config(DEFAULT_FAMILY, tokenizer, **widths, **heads)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, do_sample=False
    )
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def serve(path: Path, new_tokens: int, extra: list[str], log: Path) -> tuple[subprocess.Popen[str], str]:
    """``prompter serve`` in its own process; its base URL once it says it is serving."""
    argv = [sys.executable, "-m", "modules.cli", "serve", "--model", str(path), "--port", "0"]
    argv += ["--max-new-tokens", str(new_tokens), "--max-batch-size", "64", *extra]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "VLLM_CONFIGURE_LOGGING": "0",  # vLLM's own handler would print to stdout, where the URL comes
    }
    errors = log.open("w")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors, text=True, env=env)
    assert proc.stdout is not None  # noqa: S101 - asked for above
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("serving ") and " at " in line:
            threading.Thread(target=proc.stdout.read, daemon=True).start()  # keep the pipe drained
            return proc, line.split(" at ", 1)[1].split()[0]
    proc.kill()
    raise RuntimeError(f"prompter serve {' '.join(extra)} did not start; its stderr is in {log}")


def run(
    models: list[str], dtype: str, new_tokens: int, per_level: dict[int, int], logs: Path, device: str = "cuda"
) -> dict[str, Any]:
    from modules.local.tiny_model import cached_tiny_model

    folders = {"tiny": cached_tiny_model()}
    if "small" in models:
        folders["small"] = small_model(Path(tempfile.gettempdir()) / "prompter-small")
    engines = {
        "transformers": ["--engine", "transformers", "--device", device, "--dtype", dtype],
        "vllm": ["--engine", "vllm", "--dtype", dtype, "--vllm-option", "gpu_memory_utilization=0.5"],
    }
    report: dict[str, Any] = {"dtype": dtype, "new_tokens": new_tokens, "models": {}}
    for name in models:
        rows: dict[str, Any] = {}
        for engine, extra in engines.items():
            t0 = time.perf_counter()
            try:
                proc, base = serve(folders[name], new_tokens, extra, logs / f"serve-{name}-{engine}.log")
            except RuntimeError as exc:
                rows[engine] = {"error": str(exc)}
                continue
            started = time.perf_counter() - t0
            try:
                levels = _throughput(base + "/chat/completions", per_level, new_tokens, model=folders[name].name)
                rows[engine] = {"start_s": round(started, 1), "levels": levels}
            except Exception as exc:  # noqa: BLE001 - reported, the next engine still runs
                rows[engine] = {"error": f"{type(exc).__name__}: {exc}"}
            finally:
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
            print(name, engine, json.dumps(rows[engine]), flush=True)
        if all("levels" in rows.get(e, {}) for e in engines):
            rows["vllm_x_transformers"] = {
                clients: round(
                    rows["vllm"]["levels"][clients]["requests_per_s"]
                    / rows["transformers"]["levels"][clients]["requests_per_s"],
                    2,
                )
                for clients in per_level
            }
        report["models"][name] = rows
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="tiny,small", help="comma-separated: tiny, small")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--one", type=int, default=16, help="requests for the single client")
    parser.add_argument("--many", type=int, default=256, help="requests for the 64 clients")
    parser.add_argument("--logs", default=tempfile.gettempdir())
    parser.add_argument("--device", default="cuda", help="the transformers engine's device")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    levels = {1: args.one, 64: args.many}
    report = run(args.models.split(","), args.dtype, args.max_tokens, levels, Path(args.logs), args.device)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
