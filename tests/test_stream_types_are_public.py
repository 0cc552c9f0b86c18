"""The stream types a module returns are public names, for annotations and isinstance checks.

``OnlineChatModule.stream()`` returns an ``OnlineChatStream`` (a ``ChatStream`` with the whole
``response`` at its end) and ``astream()`` an ``AsyncChatStream``; neither name could be imported
from the package, so an application could only annotate with the base class, losing ``response``.
"""

from __future__ import annotations

import asyncio

from modules.testing import FakeOpenAIServer


def test_both_stream_types_import_from_the_package_and_its_facade() -> None:
    import modules
    import prompter.modules
    from modules.online.aio import AsyncChatStream
    from modules.online.response import OnlineChatStream

    assert modules.OnlineChatStream is prompter.modules.OnlineChatStream is OnlineChatStream
    assert modules.AsyncChatStream is prompter.modules.AsyncChatStream is AsyncChatStream
    assert {"OnlineChatStream", "AsyncChatStream"} <= set(modules.__all__)


def test_what_stream_and_astream_return_are_those_types() -> None:
    from prompter.modules import AsyncChatStream, ChatStream, OnlineChatModule, OnlineChatStream

    async def pieces(stream: AsyncChatStream) -> str:
        async with stream:
            return "".join([piece async for piece in stream])

    with FakeOpenAIServer(replies=["hello there", "hello there"]) as server:
        m = OnlineChatModule("openai", model=server.model, base_url=server.base_url, api_key="sk-test")
        stream = m.stream("hi")
        assert isinstance(stream, OnlineChatStream) and isinstance(stream, ChatStream)
        with stream:
            assert "".join(stream) == "hello there"
        assert stream.response is not None and stream.response.text == "hello there"
        astream = m.astream("hi")
        assert isinstance(astream, AsyncChatStream)
        assert asyncio.run(pieces(astream)) == "hello there"
