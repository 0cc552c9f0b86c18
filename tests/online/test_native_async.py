"""Async calls: acall / arespond / astream on every dialect, off the event loop, with bounded threads and sockets."""

from __future__ import annotations

import asyncio
import threading

import pytest
from fault_server import FaultServer
from wire.anthropic import KEY as ANTHROPIC_KEY
from wire.anthropic import AnthropicServer
from wire.gemini import KEY as GEMINI_KEY
from wire.gemini import GeminiServer
from wire.ollama import MODEL as OLLAMA_MODEL
from wire.ollama import OllamaServer

from modules import OnlineChatModule
from modules.errors import AuthenticationError, ModuleConfigError
from modules.online.aio import ASYNC_WORKERS

NATIVE = {
    "anthropic": (AnthropicServer, {"api_key": ANTHROPIC_KEY, "model": "claude-test"}, "Hello from Claude."),
    "gemini": (GeminiServer, {"api_key": GEMINI_KEY, "model": "gemini-test"}, "Hello from Gemini."),
    "ollama": (OllamaServer, {"model": OLLAMA_MODEL}, "Hello from Ollama."),
}


def _async_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("prompter-async")]


def test_200_concurrent_acalls_are_all_right_with_bounded_threads_and_sockets_and_the_loop_free():
    before = set(_async_threads())  # other modules' workers (a started TrainableModule's) are not this module's

    async def main(m: OnlineChatModule) -> tuple[list, int, int]:
        ticks = 0
        most_threads = 0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks, most_threads
            while not done.is_set():
                ticks += 1
                most_threads = max(most_threads, len(set(_async_threads()) - before))
                await asyncio.sleep(0.001)

        watcher = asyncio.create_task(ticker())
        answers = await asyncio.gather(*(m.acall(f"question {i}") for i in range(200)))
        done.set()
        await watcher
        return answers, ticks, most_threads

    with AnthropicServer() as server:
        server.delay = 0.01
        m = OnlineChatModule("anthropic", model="claude-test", api_key=ANTHROPIC_KEY, base_url=server.base_url)
        answers, ticks, most_threads = asyncio.run(main(m))
        assert answers == ["Hello from Claude."] * 200
        assert len(server.received) == 200 and not server.rejections
        assert sorted(r.body["messages"][0]["content"] for r in server.received) == sorted(
            f"question {i}" for i in range(200)
        )
        assert ticks > 1  # the event loop ran other work while the calls were in flight
        assert most_threads <= ASYNC_WORKERS
        assert len({r.client_port for r in server.received}) <= ASYNC_WORKERS  # connections reused, not one per call
        m.close()
    for thread in set(_async_threads()) - before:
        thread.join(timeout=5)
    assert set(_async_threads()) <= before  # close() ends the threads


@pytest.mark.parametrize("source", sorted(NATIVE))
def test_astream_and_arespond_on_every_native_source(source):
    server_class, kw, text = NATIVE[source]

    async def main(m: OnlineChatModule) -> None:
        stream = m.astream("hi")
        pieces = [piece async for piece in stream]
        assert "".join(pieces) == text and len(pieces) > 1
        assert stream.response is not None and stream.response.finish_reason == "stop"
        response = await m.arespond("hi")
        assert response.text == text and response.usage["total_tokens"] > 0

    with server_class() as server:
        with OnlineChatModule(source, base_url=server.base_url, **kw) as m:
            asyncio.run(main(m))


def test_acall_on_an_openai_compatible_source_and_async_errors_are_typed():
    async def main() -> None:
        with FaultServer() as server:
            with OnlineChatModule(base_url=server.base_url, model="m") as m:
                assert await m.acall("hi") == "ok"
        with AnthropicServer() as server:
            with OnlineChatModule("anthropic", model="c", api_key="sk-ant-wrong-0000000000", base_url=server.base_url) as m:
                with pytest.raises(AuthenticationError):
                    await m.acall("hi")
                s = m.astream("hi")
                with pytest.raises(AuthenticationError):
                    async with s:
                        pass

    asyncio.run(main())


def test_stopping_an_astream_early_releases_it():
    async def main(m: OnlineChatModule) -> None:
        async with m.astream("hi") as stream:
            async for _piece in stream:
                break
        assert stream.response is None  # not read to its end
        assert await m.acall("again") == "Hello from Claude."

    with AnthropicServer() as server:
        server.piece = 4
        with OnlineChatModule("anthropic", model="c", api_key=ANTHROPIC_KEY, base_url=server.base_url) as m:
            asyncio.run(main(m))


def test_any_module_gets_acall_and_astream_from_the_async_calls_mixin():
    """What TrainableModule needs: ``class TrainableModule(AsyncCalls, ModuleBase[...])``."""
    from modules.base import Completion, ModuleBase
    from modules.online.aio import AsyncCalls

    seen: list[str] = []

    class Echo(AsyncCalls, ModuleBase[str]):
        def _build_request(self, input, history, tools, generation):
            return f"you said: {input}"

        def _complete(self, request):
            seen.append(threading.current_thread().name)
            return Completion(text=request, finish_reason="stop")

    async def main(m: Echo) -> None:
        assert await asyncio.gather(*(m.acall(str(i)) for i in range(30))) == [f"you said: {i}" for i in range(30)]
        stream = m.astream("hi")
        assert [piece async for piece in stream] == ["you said: hi"]
        assert stream.text == "you said: hi" and stream.finish_reason == "stop" and stream.response is None

    before = set(_async_threads())
    m = Echo()
    asyncio.run(main(m))
    assert seen and all(name.startswith("prompter-async") for name in seen)  # never on the loop's thread
    m.close_async()
    for thread in set(_async_threads()) - before:
        thread.join(timeout=5)
    assert set(_async_threads()) <= before


def test_async_workers_raise_the_concurrency_with_as_many_pooled_sockets():
    async def main(m: OnlineChatModule) -> list:
        return await asyncio.gather(*(m.acall(f"q{i}") for i in range(120)))

    before = set(_async_threads())
    with AnthropicServer() as server:
        server.delay = 0.05
        with OnlineChatModule("anthropic", model="c", api_key=ANTHROPIC_KEY, base_url=server.base_url,
                              async_workers=40) as m:  # fmt: skip
            assert asyncio.run(main(m)) == ["Hello from Claude."] * 120
            assert len(set(_async_threads()) - before) <= 40
        ports = {r.client_port for r in server.received}
        assert 10 < len(ports) <= 40  # more than the default 10 at once, each connection reused
    with pytest.raises(ModuleConfigError, match="async_workers"):
        OnlineChatModule("anthropic", api_key=ANTHROPIC_KEY, async_workers=0)


def test_cancelling_a_task_mid_step_then_closing_the_stream_is_clean():
    async def main(m: OnlineChatModule) -> None:
        stream = m.astream("hi")
        first = await stream.__anext__()
        assert first
        step = asyncio.ensure_future(stream.__anext__())  # runs on a thread, waiting on the slow server
        await asyncio.sleep(0.05)
        step.cancel()
        await stream.aclose()  # must wait for that step, not race it ("generator already executing")
        assert await m.acall("again") == "Hello from Claude."

    with AnthropicServer() as server:
        server.piece = 16
        server.chunk_delay = 0.1
        with OnlineChatModule("anthropic", model="c", api_key=ANTHROPIC_KEY, base_url=server.base_url) as m:
            asyncio.run(main(m))
