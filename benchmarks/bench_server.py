"""Benchmark the OpenAI-compatible server against in-process calls on the tiny model.

Measures, on whatever machine runs it:

* **overhead per request**: median latency of ``POST /v1/chat/completions``
  (httpx, keep-alive, non-streaming) minus the median of the same generation
  called in process (``module.generate(module.prepare(...))``);
* **fairness**: the latency of a small request (``"hi"``, 8 tokens) alone, and
  while the largest request the server accepts is running (16 stop strings of
  256 characters, the documented limits, a long prompt and a long answer):
  the ratio must stay under 5;
* **stop matching**: the stream's cost per generated character with 16 stop
  strings of 256 characters, for an answer of N and of 4N characters (the ratio
  of the two times is about 4 when matching is linear);
* **throughput** for 1, 8 and 64 concurrent clients against ``prompter serve``
  in its own process (asyncio clients, one warm keep-alive connection each,
  answers checked against the single-client ones): requests/s and generated tokens/s, three times: with
  generation serialised (``--max-batch-size 1``: one request at a time, taking
  turns every 16 tokens), with continuous batching (``--max-batch-size 64``,
  ``prompter serve``'s default; both with the decode loop in its engine
  process, ``prompter serve``'s default) and with
  the same batching in the server's own process (``--no-engine-process``),
  each as a ratio against one client in the same run (throughput/1 client,
  p95/1 client), and the engine process's throughput against the in-server loop's;
* **the load generator's floor**: the same clients against a stand-in server that only
  waits the batched server's single-client median per request, whatever the load
  (``benchmarks/_floor_server.py``): its p95/1 client is what the client side and HTTP
  cost by themselves on this machine, the best that ratio can be for any server here.

On a small CPU, PyTorch's intra-op threads fight each other and the server's
threads; ``--threads 1`` (``torch.set_num_threads(1)``) is usually faster for
the tiny model.

::

    python benchmarks/bench_server.py            # the full run (about a minute on 2 cores)
    python benchmarks/bench_server.py --quick    # a smoke run (seconds)
    python benchmarks/bench_server.py --threads 1 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _messages(i: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Question {i}: what is the weather in city number {i}?"}]


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def run(quick: bool = False, max_tokens: int | None = None, threads: int | None = None) -> dict[str, Any]:
    """Run the benchmark and return its numbers (also printed)."""
    import httpx
    from transformers.utils import logging

    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    logging.disable_progress_bar()
    if threads:
        import torch

        torch.set_num_threads(threads)
    new_tokens = max_tokens or (4 if quick else 16)
    reps = 5 if quick else 30
    # one client's p95 is the ratios' denominator: 100 requests put it between the 5 slowest, not the 2 slowest
    per_level = {1: 4, 8: 8, 64: 64} if quick else {1: 100, 8: 128, 64: 512}

    path = cached_tiny_model()
    results: dict[str, Any] = {"max_new_tokens": new_tokens}
    module = TrainableModule(path, name="tiny", max_new_tokens=new_tokens).start(serve=True)
    url = module.url + "/chat/completions"
    try:
        # Warm up both paths (first calls pay one-off costs).
        module.generate(module.prepare(_messages(0)))
        with httpx.Client(timeout=120) as http:
            http.post(url, json={"model": "tiny", "messages": _messages(0)}).raise_for_status()

        in_process = []
        for i in range(reps):
            t = time.perf_counter()
            module.generate(module.prepare(_messages(i), max_new_tokens=new_tokens))
            in_process.append(time.perf_counter() - t)
        over_http = []
        with httpx.Client(timeout=120) as http:
            for i in range(reps):
                t = time.perf_counter()
                r = http.post(url, json={"model": "tiny", "messages": _messages(i), "max_tokens": new_tokens})
                r.raise_for_status()
                over_http.append(time.perf_counter() - t)
        results["in_process_ms"] = round(_median_ms(in_process), 2)
        results["over_http_ms"] = round(_median_ms(over_http), 2)
        results["overhead_ms"] = round(results["over_http_ms"] - results["in_process_ms"], 2)
        results["fairness"] = _fairness(url, quick)
        results["stop_matching"] = _stop_matching(quick)
    finally:
        module.stop()
    results["concurrency"] = _throughput_process(path, per_level, new_tokens, 1, threads)
    results["concurrency_batched"] = _throughput_process(path, per_level, new_tokens, 64, threads)
    results["concurrency_batched_in_server"] = _throughput_process(
        path, per_level, new_tokens, 64, threads, ("--no-engine-process",)
    )
    results["concurrency_batched_stream"] = _throughput_process(path, per_level, new_tokens, 64, threads, stream=True)
    results["concurrency_floor"] = _throughput_floor(per_level, new_tokens, results["concurrency_batched"][1]["p50_ms"])
    results["concurrency_in_process"] = _throughput_threads(path, per_level, new_tokens, 64)
    top = max(per_level)
    results["engine_process_x"] = round(
        results["concurrency_batched"][top]["requests_per_s"]
        / results["concurrency_batched_in_server"][top]["requests_per_s"],
        2,
    )

    print(f"tiny model, max_new_tokens={new_tokens}")
    print(f"  in process : {results['in_process_ms']:8.2f} ms / request (median of {reps})")
    print(f"  over HTTP  : {results['over_http_ms']:8.2f} ms / request")
    print(f"  overhead   : {results['overhead_ms']:8.2f} ms / request")
    fair = results["fairness"]
    print(
        f"  fairness   : small request alone {fair['solo_ms']:.1f} ms, beside the largest allowed one "
        f"{fair['beside_largest_ms']:.1f} ms (ratio {fair['ratio']:.2f}; the largest took {fair['largest_ms']:.0f} ms)"
    )
    stop = results["stop_matching"]
    print(
        f"  stop match : {stop['chars']} chars {stop['short_ms']:.1f} ms, {4 * stop['chars']} chars "
        f"{stop['long_ms']:.1f} ms (ratio {stop['ratio']:.2f}; 4 is linear)"
    )
    titles = (
        ("concurrency", "serialised (--max-batch-size 1)"),
        ("concurrency_batched", "batched (--max-batch-size 64, the default: decode loop in its engine process)"),
        ("concurrency_batched_in_server", "batched, decode loop in the server's process (--no-engine-process)"),
        ("concurrency_batched_stream", "batched, every request streamed (stream=true, answers joined from the pieces)"),
        ("concurrency_in_process", "in a program, no HTTP: threads calling one module (max_batch_size=64)"),
        ("concurrency_floor", "the load generator's floor: a stand-in server that only waits one client's median"),
    )
    for key, title in titles:
        print(f"  {title}")
        print("  clients  requests  req/s   tok/s   p50 ms   p95 ms  throughput/1 client  p95/1 client  mismatched")
        for clients, row in results[key].items():
            print(
                f"  {clients:7d}  {row['requests']:8d}  {row['requests_per_s']:5.1f}  {row['tokens_per_s']:6.1f}"
                f"  {row['p50_ms']:7.1f}  {row['p95_ms']:7.1f}  {row['throughput_x']:18.2f}x  {row['p95_x']:11.2f}x  {row['mismatched']:10d}"
            )
    print(f"  engine process: {results['engine_process_x']:.2f}x the throughput of the in-server loop at {top} clients")
    print(
        f"  p95/1 client at {top} clients: {results['concurrency_batched'][top]['p95_x']:.2f}x served, "
        f"{results['concurrency_floor'][top]['p95_x']:.2f}x for the stand-in that never slows down"
    )
    return results


def _largest_allowed_body(max_tokens: int) -> dict[str, Any]:
    """The most expensive request the limits allow on the tiny model: every stop string at its limit."""
    from modules.server.limits import MAX_STOP_CHARS, MAX_STOP_STRINGS

    # Stop strings the answer can almost match (each is a long run of one frequent character), CJK
    # for the widest per-character tables in transformers' own stop-string matcher.
    stops = [chr(0x4E00 + i) * MAX_STOP_CHARS for i in range(MAX_STOP_STRINGS - 1)] + ["e" * MAX_STOP_CHARS]
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " * 20} for i in range(15)]
    return {"model": "tiny", "messages": history, "max_tokens": max_tokens, "stop": stops, "stream": True}


def _fairness(url: str, quick: bool) -> dict[str, float]:
    """A small request's latency alone and beside the largest allowed request (median of a few)."""
    import httpx

    small = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}
    reps = 3 if quick else 7
    with httpx.Client(timeout=300) as http:
        solo = []
        for _ in range(reps):
            t = time.perf_counter()
            http.post(url, json=small).raise_for_status()
            solo.append(time.perf_counter() - t)
        beside, largest = [], []
        for _ in range(reps):
            started = threading.Event()
            took: list[float] = []

            def big(started: threading.Event = started, took: list[float] = took) -> None:
                t0 = time.perf_counter()
                with httpx.Client(timeout=300) as other:
                    body = _largest_allowed_body(64 if quick else 256)
                    with other.stream("POST", url, json=body) as response:
                        response.raise_for_status()
                        for _line in response.iter_lines():
                            started.set()
                took.append(time.perf_counter() - t0)

            worker = threading.Thread(target=big)
            worker.start()
            started.wait(60)
            t = time.perf_counter()
            http.post(url, json=small).raise_for_status()
            beside.append(time.perf_counter() - t)
            worker.join()
            largest.append(took[0])
    solo_ms, beside_ms = _median_ms(solo), _median_ms(beside)
    return {
        "solo_ms": round(solo_ms, 1),
        "beside_largest_ms": round(beside_ms, 1),
        "ratio": round(beside_ms / solo_ms, 2),
        "largest_ms": round(_median_ms(largest), 1),
    }


def _stop_matching(quick: bool) -> dict[str, float]:
    """Time of stream_deltas over N and 4N characters of pieces with the largest allowed stop strings."""
    from modules.local.request import GenerationOptions, LocalRequest
    from modules.local.streaming import stream_deltas
    from modules.server.limits import MAX_STOP_CHARS, MAX_STOP_STRINGS

    stops = tuple("e" * (MAX_STOP_CHARS - 1) + chr(0x61 + i) for i in range(MAX_STOP_STRINGS))
    request = LocalRequest((), None, "", (), (1,), GenerationOptions())
    done = threading.Thread(target=lambda: None)
    done.start()

    def run(n_pieces: int) -> float:
        pieces = ["eeee"] * n_pieces  # every piece extends a near-match of every stop string
        t = time.perf_counter()
        for _ in stream_deltas(request, iter(pieces), done, threading.Event(), {"ids": []}, None, stops, None):
            pass
        return time.perf_counter() - t

    n = 2_000 if quick else 20_000
    short = min(run(n) for _ in range(3))
    long = min(run(4 * n) for _ in range(3))
    return {
        "chars": 4 * n,
        "short_ms": round(short * 1000, 1),
        "long_ms": round(long * 1000, 1),
        "ratio": round(long / short, 2),
    }


def _serve(
    path: Path, new_tokens: int, batch: int, threads: int | None, extra: tuple[str, ...] = ()
) -> tuple[Any, str]:
    """``prompter serve`` in its own process (so the load generator never shares its GIL); its base URL."""
    import os
    import subprocess

    argv = [sys.executable, "-m", "modules.cli", "serve", "--model", str(path), "--port", "0"]
    argv += ["--max-new-tokens", str(new_tokens), "--max-batch-size", str(batch), *extra]
    if threads:
        argv += ["--torch-threads", str(threads)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert proc.stdout is not None  # noqa: S101 - asked for above
    line = proc.stdout.readline()  # "serving 'name' at http://127.0.0.1:PORT/v1  (Ctrl-C to stop)"
    if " at " not in line:
        proc.kill()
        raise RuntimeError(f"prompter serve did not start: {line!r}")
    return proc, line.split(" at ", 1)[1].split()[0]


def _throughput_process(
    path: Path,
    per_level: dict[int, int],
    new_tokens: int,
    batch: int,
    threads: int | None,
    extra: tuple[str, ...] = (),
    stream: bool = False,
) -> Any:
    """:func:`_throughput` against a server in another process; also checks 0 mismatched answers."""
    proc, base = _serve(path, new_tokens, batch, threads, extra)
    try:
        name = path.name
        return _throughput(base + "/chat/completions", per_level, new_tokens, model=name, stream=stream)
    finally:
        proc.terminate()
        proc.wait(30)


def _throughput_floor(per_level: dict[int, int], new_tokens: int, delay_ms: float) -> Any:
    """:func:`_throughput` against ``benchmarks/_floor_server.py`` answering after *delay_ms* at any load."""
    import subprocess

    script = str(ROOT / "benchmarks" / "_floor_server.py")
    argv = [sys.executable, script, "--delay-ms", str(delay_ms), "--tokens", str(new_tokens)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None  # noqa: S101 - asked for above
        line = proc.stdout.readline()  # "serving at http://127.0.0.1:PORT/v1"
        if " at " not in line:
            raise RuntimeError(f"the floor server did not start: {line!r}")
        return _throughput(line.split(" at ", 1)[1].split()[0] + "/chat/completions", per_level, new_tokens, "floor")
    finally:
        proc.terminate()
        proc.wait(30)


def _throughput_threads(path: Path, per_level: dict[int, int], new_tokens: int, batch: int) -> Any:
    """:func:`_throughput`'s figures for a program that calls one module from several threads (no HTTP):
    each thread sends its next request as soon as its answer arrives; the answers are compared with
    the single-thread ones."""
    import gc

    from modules.local.trainable import TrainableModule

    module = TrainableModule(path, max_batch_size=batch, max_new_tokens=new_tokens).start()

    def level(clients: int, total: int) -> tuple[float, list[tuple[float, int]], dict[int, str]]:
        todo = list(range(total))[::-1]
        done: list[tuple[float, int]] = []
        answers: dict[int, str] = {}
        lock = threading.Lock()

        def client() -> None:
            while True:
                with lock:
                    if not todo:
                        return
                    i = todo.pop()
                t = time.perf_counter()
                answer = module.generate(module.prepare(_messages(i), max_new_tokens=new_tokens))
                done.append((time.perf_counter() - t, int((answer.usage or {}).get("completion_tokens", 0))))
                answers[i] = answer.text

        workers = [threading.Thread(target=client) for _ in range(clients)]
        t0 = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return time.perf_counter() - t0, done, answers

    try:
        level(max(per_level), max(per_level))  # warm: every thread's first call, the engine's first steps
        measured = {}
        for clients, total in per_level.items():
            gc.disable()  # as for the HTTP clients: the collector would stop every caller at once
            try:
                measured[clients] = level(clients, total)
            finally:
                gc.enable()
                gc.collect()
    finally:
        module.stop()
    return _levels(measured, per_level)


def _levels(
    measured: dict[int, tuple[float, list[tuple[float, int]], dict[int, str]]], per_level: dict[int, int]
) -> dict[int, dict[str, float]]:
    """Per number of clients: requests/s, tokens/s, p50 and p95, mismatched answers (against the
    first level's), and the throughput and p95 as ratios of the first level's, from the same run."""
    levels: dict[int, dict[str, float]] = {}
    reference: dict[int, str] = {}
    for clients, (wall, done, answers) in measured.items():
        total = per_level[clients]
        if not reference:
            reference = answers
        latencies = sorted(d[0] for d in done)
        levels[clients] = {
            "requests": total,
            "requests_per_s": round(total / wall, 2),
            "tokens_per_s": round(sum(d[1] for d in done) / wall, 1),
            "p50_ms": round(_median_ms(latencies), 1),
            "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))] * 1000, 1),
            "mismatched": sum(1 for i, text in answers.items() if i in reference and reference[i] != text),
        }
    one = levels[min(levels)]
    for row in levels.values():
        row["throughput_x"] = round(row["requests_per_s"] / one["requests_per_s"], 2)
        row["p95_x"] = round(row["p95_ms"] / one["p95_ms"], 2)
    return levels


def _throughput(
    url: str, per_level: dict[int, int], new_tokens: int, model: str = "tiny", stream: bool = False
) -> dict[int, dict[str, float]]:
    """Requests/s, tokens/s and latency percentiles for each number of concurrent clients.

    The clients are asyncio tasks, one keep-alive connection each, opened and warmed by one request
    before the clock starts: 64 client threads (or 64 connections opened on the clock) in a small
    machine's Python measure the load generator, not the server (on 2 cores, 1.7x at 64 clients
    with p95 37x, against 6x and 13x with this generator and the server in another process).
    Every answer is compared with the single-client answer to the same question (greedy).
    """
    import asyncio
    import gc

    import httpx

    def body(i: int) -> dict[str, Any]:
        return {"model": model, "messages": _messages(i), "max_tokens": new_tokens, "stream": stream}

    async def ask(http: httpx.AsyncClient, i: int) -> tuple[str, int]:
        """The answer's text and its token count (a stream: its pieces joined, its usage chunk's count)."""
        if not stream:
            r = await http.post(url, json=body(i))
            r.raise_for_status()
            return r.json()["choices"][0]["message"]["content"], int(r.json()["usage"]["completion_tokens"])
        pieces, tokens = [], 0
        payload = {**body(i), "stream_options": {"include_usage": True}}
        async with http.stream("POST", url, json=payload) as r:
            r.raise_for_status()
            async for line in r.aiter_lines():
                if not line.startswith("data: {"):
                    continue
                event = json.loads(line[len("data: ") :])
                if event.get("usage"):
                    tokens = int(event["usage"]["completion_tokens"])
                for choice in event["choices"]:
                    pieces.append(choice["delta"].get("content") or "")
        return "".join(pieces), tokens

    async def level(clients: int, total: int) -> tuple[float, list[tuple[float, int]], dict[int, str]]:
        pool = [httpx.AsyncClient(timeout=300) for _ in range(clients)]
        try:
            await asyncio.gather(*(ask(c, 0) for c in pool))  # connect and warm
            todo = list(range(total))[::-1]
            done: list[tuple[float, int]] = []
            answers: dict[int, str] = {}

            async def client(http: httpx.AsyncClient) -> None:
                while todo:
                    i = todo.pop()
                    t = time.perf_counter()
                    answers[i], tokens = await ask(http, i)
                    done.append((time.perf_counter() - t, tokens))

            t0 = time.perf_counter()
            await asyncio.gather(*(client(c) for c in pool))
            return time.perf_counter() - t0, done, answers
        finally:
            for c in pool:
                await c.aclose()

    measured = {}
    for clients, total in per_level.items():
        # The load generator's own collector stops all 64 clients at once when it runs (one run in
        # four, p95 427 ms against a server-side p95 of 227 ms on 2 cores): off while measuring.
        gc.disable()
        try:
            measured[clients] = asyncio.run(level(clients, total))
        finally:
            gc.enable()
            gc.collect()
    return _levels(measured, per_level)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few requests only (a smoke test)")
    parser.add_argument("--max-tokens", type=int, default=None, help="tokens generated per request")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    results = run(quick=args.quick, max_tokens=args.max_tokens, threads=args.threads)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
