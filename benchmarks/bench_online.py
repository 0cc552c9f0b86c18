"""Per-call overhead of OnlineChatModule versus a bare ``requests`` Session post, on loopback.

Both clients send the same JSON body to the same server and parse the answer:

- bare:   ``session.post(url, json=body, headers=...)`` then ``.json()["choices"][0]["message"]["content"]``
- module: ``OnlineChatModule(...)("hello")`` (EmptyPrompter: render, build, send, retry loop, parse)

The server runs in a separate process (so it does not compete for this
process's GIL), speaks HTTP/1.1 with keep-alive and answers a canned
completion, so the time measured is the client's. Calls are interleaved
(bare, module, bare, module, ...) so drift affects both alike; the report is
the median per call in microseconds and the ratio module / bare. The bar is
1.2x.

    python benchmarks/bench_online.py            # 3000 calls each
    python benchmarks/bench_online.py --quick    # 200 calls each (smoke test)
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BAR = 1.2
ANSWER = {
    "id": "chatcmpl-bench",
    "object": "chat.completion",
    "model": "bench-model",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello!"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
}


def serve() -> None:
    """Child process: a canned OpenAI-compatible server; prints its port, serves until stdin closes."""
    from modules.testing import LoopbackServer, write_response

    body = json.dumps(ANSWER).encode()

    def handle(request, sock: socket.socket) -> bool:
        write_response(sock, 200, body)
        return True

    server = LoopbackServer(handle).start()
    print(server.port, flush=True)
    sys.stdin.read()
    server.stop()


def run(calls: int, warmup: int) -> dict[str, float]:
    import requests

    from modules import OnlineChatModule

    child = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        base_url = f"http://127.0.0.1:{port}/v1"
        key = "sk-bench-0000000000000000"
        module = OnlineChatModule(base_url=base_url, model="bench-model", api_key=key)
        body = dict(module.build_request("hello").body)
        session = requests.Session()
        headers = {"Authorization": f"Bearer {key}"}
        url = base_url + "/chat/completions"

        def bare() -> str:
            r = session.post(url, json=body, headers=headers, timeout=(5, 120))
            r.raise_for_status()
            return r.json()["choices"][0]["message"]["content"]

        def mod() -> str:
            return module("hello")

        for _ in range(warmup):
            assert bare() == mod() == "Hello!"
        times: dict[str, list[int]] = {"bare": [], "module": []}
        clock = time.perf_counter_ns
        for _ in range(calls):
            for name, fn in (("bare", bare), ("module", mod)):
                t0 = clock()
                fn()
                times[name].append(clock() - t0)
        module.close()
        session.close()
    finally:
        if child.stdin:
            child.stdin.close()
        child.wait(timeout=10)
    bare_us = statistics.median(times["bare"]) / 1000
    module_us = statistics.median(times["module"]) / 1000
    return {
        "calls": calls,
        "bare_median_us": round(bare_us, 1),
        "module_median_us": round(module_us, 1),
        "overhead_us": round(module_us - bare_us, 1),
        "ratio": round(module_us / bare_us, 3),
        "bar": BAR,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 calls each: a smoke test")
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve()
        return 0
    calls = args.calls or (200 if args.quick else 3000)
    result = run(calls, warmup=20 if args.quick else 200)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"calls each:        {result['calls']}")
        print(f"bare requests:     {result['bare_median_us']:.1f} us/call (median)")
        print(f"OnlineChatModule:  {result['module_median_us']:.1f} us/call (median)")
        print(f"overhead:          {result['overhead_us']:.1f} us/call")
        print(f"ratio:             {result['ratio']:.3f}x (bar: {BAR}x)")
    return 0 if result["ratio"] <= BAR or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
