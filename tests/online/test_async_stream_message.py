"""``astream(...)`` gives the assistant turn (``message``) as ``stream(...)`` does, for a history to carry on."""

from __future__ import annotations

import asyncio

from fault_server import FaultServer, Stream, sse_events

from modules import OnlineChatModule


def test_an_async_stream_gives_the_assistant_message_as_the_sync_stream_does() -> None:
    tool_call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    with FaultServer() as server:
        with OnlineChatModule(base_url=server.base_url, model="m", api_key="sk-test-0000") as m:
            for events in (sse_events("Hello there"), sse_events("", tool_calls=[tool_call])):
                server.script.append(Stream(events))
                sync = m.stream("hi")
                list(sync)
                server.script.append(Stream(events))

                async def main() -> object:
                    stream = m.astream("hi")
                    async for _piece in stream:
                        pass
                    return stream.message

                assert asyncio.run(main()) == sync.message
