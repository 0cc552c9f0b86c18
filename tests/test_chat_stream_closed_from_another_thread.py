"""``stream.close()`` from another thread (a UI's stop button) while a reader is blocked in the stream.

It raised ``ValueError: generator already executing`` in the closing thread and
left the reader reading to the end of the answer. Now close() returns at once,
the read in flight returns its piece, the stream releases its source right then
(its ``finally`` runs) and the reader's loop ends there.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from modules.base import ChatStream, StreamDelta

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fault_server import FaultServer, Stream  # noqa: E402


def test_close_from_another_thread_ends_the_readers_loop_after_the_piece_in_flight() -> None:
    gate, reading, released = threading.Event(), threading.Event(), threading.Event()

    def deltas() -> Iterator[StreamDelta]:
        try:
            yield StreamDelta("one ")
            reading.set()
            gate.wait(30)  # the read the stop button interrupts
            yield StreamDelta("two ")
            yield StreamDelta("three ")  # never read: the stream was closed
        finally:
            released.set()

    stream = ChatStream(deltas())
    got: list[str] = []
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            got.extend(stream)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertions below
            errors.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    assert reading.wait(30)
    stream.close()  # from this thread, while the reader waits inside the generator
    gate.set()
    thread.join(30)
    assert not thread.is_alive() and not errors
    assert got == ["one ", "two "]
    assert released.is_set()  # the source was released as the read in flight returned
    assert list(stream) == []  # and the stream stays ended
    stream.close()  # twice is fine


def test_close_before_any_read_and_twice_is_quiet() -> None:
    stream = ChatStream(iter([StreamDelta("a")]))
    stream.close()
    stream.close()
    assert list(stream) == []


def _sse(payload: dict[str, object]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def test_an_online_stream_closed_from_another_thread_stops_reading() -> None:
    from modules import OnlineChatModule

    piece = _sse({"choices": [{"index": 0, "delta": {"content": "piece "}}]})
    with FaultServer() as server:
        server.script[:] = [Stream([piece] * 3, delay=1.0, hang_after=1.0)]
        stream = OnlineChatModule(base_url=server.base_url, model="m", max_retries=0).stream("hi")
        got: list[str] = []
        errors: list[BaseException] = []
        first = threading.Event()

        def reader() -> None:
            try:
                for text in stream:
                    got.append(text)
                    first.set()
            except BaseException as exc:  # noqa: BLE001 - reported by the assertions below
                errors.append(exc)

        thread = threading.Thread(target=reader)
        thread.start()
        assert first.wait(30)
        stream.close()
        thread.join(60)
        assert not thread.is_alive()
        assert not errors, errors
        assert 1 <= len(got) <= 2  # the piece in flight at most: the third is never read
