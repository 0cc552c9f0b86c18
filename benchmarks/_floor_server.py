"""The load generator's floor: a stand-in for ``prompter serve`` whose latency never grows with clients.

``POST /v1/chat/completions`` reads the JSON body, sleeps ``--delay-ms`` on the event
loop (so any number of requests wait at once, none behind another) and answers an
OpenAI-shaped completion whose text is the last message's content (so each question has
one answer, as greedy decoding gives). Run against it, the same clients as against the
real server measure what the client side and HTTP cost by themselves: its
``p95/1 client`` at 64 clients is the best that ratio can be on this machine with this
load generator, for a server of that single-client latency. Used by ``bench_server.py``.

::

    python benchmarks/_floor_server.py --delay-ms 60   # prints "serving at http://127.0.0.1:PORT/v1"
"""

from __future__ import annotations

import argparse
import asyncio
import socket
from typing import Any


def app(delay_s: float, tokens: int) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        await asyncio.sleep(delay_s)
        text = str(body["messages"][-1]["content"])
        usage = {"prompt_tokens": 1, "completion_tokens": tokens, "total_tokens": tokens + 1}
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
        return JSONResponse({"id": "floor", "object": "chat.completion", "choices": [choice], "usage": usage})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def _protocol() -> Any:
    """uvicorn's h11 protocol with ``TCP_NODELAY`` on each connection: on a socket handed to uvicorn
    ready-made, asyncio leaves Nagle on, and the answer's body then waits on the client's delayed ACK
    (44 ms a request on loopback, measured), which ``prompter serve`` does not pay."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class NoDelay(H11Protocol):  # type: ignore[misc]
        def connection_made(self, transport: Any) -> None:
            sock = transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            super().connection_made(transport)

    return NoDelay


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay-ms", type=float, required=True, help="each answer's latency, whatever the load")
    parser.add_argument("--tokens", type=int, default=16, help="completion_tokens reported per answer")
    args = parser.parse_args()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)  # connections made before uvicorn runs wait in the backlog
    print(f"serving at http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    config = uvicorn.Config(
        app(args.delay_ms / 1000, args.tokens), log_level="error", access_log=False, http=_protocol()
    )
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
