"""Streaming a local generation: stop strings and tool-call markers never reach the caller.

A stop string may arrive split over several tokens, so text that could still
grow into one (or into the model's tool-call marker) is held back until it is
decided; a stop string ends the stream there, and tool-call syntax becomes the
last delta's ``tool_calls``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

from modules.base import StreamDelta, ToolCall
from modules.local.request import LocalRequest
from modules.local.tool_calls import parse_tool_calls

__all__ = ["CancellingStream", "cut_at_stop", "first_stop", "stop_token_streamer", "stream_deltas"]


def first_stop(text: str, stops: Sequence[str]) -> int | None:
    """Where the first of *stops* begins in *text*, or None."""
    hits = [i for i in (text.find(s) for s in stops) if i >= 0]
    return min(hits) if hits else None


def cut_at_stop(text: str, stops: Sequence[str], finish: str) -> tuple[str, str]:
    """*text* up to its first stop string (the finish reason is then ``"stop"``), else as it is."""
    cut = first_stop(text, stops)
    if cut is not None:
        return text[:cut], "stop"
    return text, finish


def stop_token_streamer(tokenizer: Any, stop_ids: set[int]) -> Any:
    """A transformers ``TextIteratorStreamer`` of the new text, without the text of *stop_ids*."""
    from transformers import TextIteratorStreamer

    class _Streamer(TextIteratorStreamer):  # drops stop tokens, so their text never shows
        def put(self, value: Any) -> None:
            if not self.next_tokens_are_prompt:
                value = value.reshape(-1)
                value = value[[int(v) not in stop_ids for v in value]]
                if value.numel() == 0:
                    return
            super().put(value)

    return _Streamer(tokenizer, skip_prompt=True, skip_special_tokens=False, timeout=None)


def stream_deltas(
    request: LocalRequest,
    streamer: Any,
    thread: threading.Thread,
    flag: threading.Event,
    outcome: dict[str, Any],
    usage: dict[str, int] | None,
    stops: tuple[str, ...],
    syntax: tuple[str, str | None] | None,
) -> Iterator[StreamDelta]:
    """The deltas of *request*, generated in *thread* into *streamer*; the last one has the finish reason.

    *thread* fills *outcome* (``ids`` and ``finish``, or ``error``); *flag* is
    set when a stop string arrives and when the iterator is closed, which stops
    the generation. *stops* are the stop strings, *syntax* the model's tool-call
    markers (see :func:`~modules.local.tool_calls.tool_syntax_of`).
    """
    # Hold back a tail that could still grow into a stop string or a tool-call marker.
    hold = max([len(s) for s in stops] + [len(syntax[0]) if syntax else 1]) - 1
    pending = ""
    sent = ""
    held_for_tools = hit_stop = False
    try:
        for piece in streamer:
            pending += piece
            cut = first_stop(pending, stops)
            if cut is not None:
                pending = pending[:cut]
                hit_stop = True
                flag.set()
            if syntax and (held_for_tools or syntax[0] in sent + pending):
                held_for_tools = True
                continue
            ready = pending if cut is not None else pending[: max(0, len(pending) - hold)]
            if ready:
                sent += ready
                pending = pending[len(ready) :]
                yield StreamDelta(text=ready)
            if cut is not None:
                break
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        if usage is not None:
            n_new = len(outcome.get("ids", ()))
            usage.update(
                prompt_tokens=len(request.input_ids),
                completion_tokens=n_new,
                total_tokens=len(request.input_ids) + n_new,
            )
        finish = outcome.get("finish", "stop")
        if finish == "cancelled" and hit_stop:
            finish = "stop"  # we set the flag ourselves, on a stop string
        full, finish = cut_at_stop(sent + pending, stops, finish)
        calls: tuple[ToolCall, ...] = ()
        if syntax:
            full, found = parse_tool_calls(full, *syntax)
            calls = tuple(found)
        rest = full[len(sent) :] if full.startswith(sent) else ""
        if calls:
            finish = "tool_calls"
        yield StreamDelta(text=rest, tool_calls=calls, finish_reason=finish)
    finally:
        flag.set()


class CancellingStream(Iterator[StreamDelta]):
    """An iterator of deltas whose ``close()`` (or garbage collection) sets *flag*, started or not.

    A generator's ``close()`` does not run its ``finally`` when it was never
    started, so a stream closed (or dropped) before its first piece would leave
    the generation running and the model lock held; this wrapper cancels it.
    """

    def __init__(self, deltas: Iterator[StreamDelta], flag: threading.Event) -> None:
        self._deltas = deltas
        self._flag = flag

    def __iter__(self) -> CancellingStream:
        return self

    def __next__(self) -> StreamDelta:
        return next(self._deltas)

    def close(self) -> None:
        """Cancel the generation (at its next token) and end the iterator; safe to call twice."""
        self._flag.set()
        close = getattr(self._deltas, "close", None)
        if close is not None:
            close()

    def __del__(self) -> None:
        flag = getattr(self, "_flag", None)
        if flag is not None:
            flag.set()
