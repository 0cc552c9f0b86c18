"""Per-call overhead of each source, as a ratio to a bare HTTP post; and the async path against ``AsyncOpenAI``.

For every dialect (OpenAI-compatible, Anthropic, Gemini, Ollama) the module calls a
loopback server speaking that protocol (``tests/online/wire/`` and
``modules.testing.FakeOpenAIServer``) ``--calls`` times, plain and streamed; the floor
is ``requests.Session.post`` of the same body to the same server, reading the JSON
answer. The report is microseconds per call and the ratio module / floor (a stream is read to
its end; the loopback servers close a stream's connection, so streams pay a new
connection per call, which the floor does not).

The async part sends ``--concurrent`` calls at once with ``acall`` and with the official
``openai.AsyncOpenAI`` client to the same server, and reports seconds and the ratio.

    python benchmarks/bench_sources.py
    python benchmarks/bench_sources.py --calls 100 --concurrent 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "tests", ROOT / "tests" / "online"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import requests  # noqa: E402
from wire.anthropic import KEY as ANTHROPIC_KEY  # noqa: E402
from wire.anthropic import AnthropicServer  # noqa: E402
from wire.gemini import KEY as GEMINI_KEY  # noqa: E402
from wire.gemini import GeminiServer  # noqa: E402
from wire.ollama import MODEL as OLLAMA_MODEL  # noqa: E402
from wire.ollama import OllamaServer  # noqa: E402

from modules import OnlineChatModule  # noqa: E402
from modules.testing import FakeOpenAIServer  # noqa: E402


def per_call(function: Any, calls: int) -> float:
    function()  # warm the connection
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls * 1e6


def bench_source(name: str, server: Any, m: OnlineChatModule, calls: int) -> None:
    request = m.build_request("hi")
    session = requests.Session()
    headers = dict(request.headers)
    key = m._backend.api_key
    if key is not None:  # what the module adds per attempt
        headers.update(m._dialect.auth(key.reveal()) if m._dialect else {"Authorization": "Bearer " + key.reveal()})
    body = json.dumps(request.body).encode()

    def bare() -> Any:
        return session.post(request.url, data=body, headers=headers, timeout=10).json()

    floor = per_call(bare, calls)
    plain = per_call(lambda: m("hi"), calls)
    streamed = per_call(lambda: "".join(m.stream("hi")), calls)
    print(f"{name:10s} bare {floor:8.0f} us  call {plain:8.0f} us ({plain / floor:4.2f}x)  "
          f"stream {streamed:8.0f} us ({streamed / floor:4.2f}x)")  # fmt: skip


async def concurrent_ours(url: str, n: int) -> float:
    with OnlineChatModule(base_url=url, model="fake-model") as m:
        start = time.perf_counter()
        await asyncio.gather(*(m.acall("hi") for _ in range(n)))
        return time.perf_counter() - start


async def concurrent_openai(url: str, n: int) -> float:
    import openai

    client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
    start = time.perf_counter()
    await asyncio.gather(
        *(client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
          for _ in range(n))
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--concurrent", type=int, default=200)
    args = parser.parse_args()
    with FakeOpenAIServer(replies=["ok"] * (3 * args.calls + 10 + 4 * args.concurrent)) as server:
        bench_source("openai", server, OnlineChatModule(base_url=server.base_url, model="fake-model"), args.calls)
        ours = asyncio.run(concurrent_ours(server.base_url, args.concurrent))
        theirs = asyncio.run(concurrent_openai(server.base_url, args.concurrent))
        print(f"async x{args.concurrent}: acall {ours:.2f} s, AsyncOpenAI {theirs:.2f} s ({ours / theirs:4.2f}x)")
    for name, server_class, kw in (
        ("anthropic", AnthropicServer, {"api_key": ANTHROPIC_KEY, "model": "c"}),
        ("gemini", GeminiServer, {"api_key": GEMINI_KEY, "model": "g"}),
        ("ollama", OllamaServer, {"model": OLLAMA_MODEL}),
    ):
        with server_class() as server:
            server.piece = 1 << 16  # whole events per write: measure the client, not the server's tiny chunks
            bench_source(name, server, OnlineChatModule(name, base_url=server.base_url, **kw), args.calls)


if __name__ == "__main__":
    main()
