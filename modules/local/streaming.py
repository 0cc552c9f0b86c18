"""Streaming a local generation: stop strings and tool-call markers never reach the caller.

A stop string may arrive split over several tokens, so text that could still
grow into one (or into the model's tool-call marker) is held back until it is
decided; a stop string ends the stream there, and tool-call syntax becomes the
last delta's ``tool_calls``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from modules.base import StreamDelta, ToolCall
from modules.local.request import LocalRequest
from modules.local.tool_calls import BARE_JSON_MARKERS, parse_tool_calls, tool_names

__all__ = ["CancellingStream", "DeltaCutter", "IncrementalDecoder", "StopMatcher", "StopWatch", "cut_at_stop",
           "first_stop", "open_stream", "stop_token_streamer", "stream_deltas", "stream_ids"]  # fmt: skip


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


class StopMatcher:
    """Finds the first stop string in text that arrives piece by piece, in time linear in the text.

    Only the last ``max(len(stop)) - 1`` characters seen are kept: a stop string
    that ends in the new piece begins inside that tail or the piece, and one that
    ended earlier was reported then. Each :meth:`feed` costs
    ``O((tail + piece) * len(stops))``, never a rescan of the whole answer.
    """

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = tuple(s for s in stops if s)
        self.keep = max((len(s) for s in self.stops), default=1) - 1
        self.tail = ""
        self.before_tail = 0  # characters fed before self.tail

    def feed(self, piece: str) -> int | None:
        """Feed the next *piece*; the offset, in all the text fed so far, where a stop string begins, or None."""
        window = self.tail + piece
        hits = [i for i in (window.find(s) for s in self.stops) if i >= 0]
        start = self.before_tail
        self.tail = window[max(0, len(window) - self.keep) :] if self.keep else ""
        self.before_tail += len(window) - len(self.tail)
        return start + min(hits) if hits else None


class IncrementalDecoder:
    """Token ids to text as they arrive, decoding a bounded window each time (never the whole answer).

    The text of new ids is the decode of ``ids[prefix:]`` minus what was already
    sent of it, where ``prefix..read`` are the ids of the previous piece:
    decoding with that context keeps a tokenizer's leading-space rules exact.
    Text ending in ``"\ufffd"`` may be an incomplete UTF-8 character, so that
    last character waits for the next id; the text before it is settled (a
    decoder replaces only the trailing incomplete sequence, at most 3 bytes, by
    one ``"\ufffd"``) and is sent. While the end stays ``"\ufffd"`` (a model
    emitting stray byte tokens), the window moves on at the last id whenever
    that id decodes on its own exactly as in context, so each id is decoded a
    bounded number of times. The pieces join to ``tokenizer.decode(ids)``.
    """

    WAIT = 4  # ids past the last settled piece before the window tries to move on (UTF-8: at most 4 bytes)

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.prefix = 0
        self.read = 0
        self.sent = 0  # characters sent beyond the decode of ids[prefix:read]

    def _decode(self, ids: list[int]) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))

    def push(self, ids: Sequence[int], final: bool = False) -> str:
        """Add *ids*; the new text that is settled (all of it when *final*)."""
        self.ids.extend(ids)
        end = len(self.ids)
        if self.read == end:
            return ""
        before = self._decode(self.ids[self.prefix : self.read])
        after = self._decode(self.ids[self.prefix :])
        done = len(before) + self.sent
        if final or not after.endswith("\ufffd"):
            if len(after) <= done:
                return ""
            self.prefix, self.read, self.sent = self.read, end, 0
            return after[done:]
        piece = after[done : len(after) - 1]
        self.sent += len(piece)
        if end - self.read >= self.WAIT:
            self._move_on(after, len(before) + self.sent, end)
        return piece

    def _move_on(self, after: str, done: int, end: int) -> None:
        """Start the window at the last id when the text up to it is settled: the window's text is the
        text before that id followed by that id's own decode (no character spans the boundary)."""
        head = self._decode(self.ids[self.prefix : end - 1])
        if after != head + self._decode(self.ids[end - 1 : end]):
            return
        self.prefix = self.read = end - 1
        self.sent = done - len(head)


class _TokenStreamer:
    """A transformers streamer (``put``/``end``) of generated ids, minus *stop_ids*, as text pieces.

    The first ``put`` is the prompt, skipped. Pieces go to :meth:`on_text`.
    """

    def __init__(self, tokenizer: Any, stop_ids: set[int]) -> None:
        self.decoder = IncrementalDecoder(tokenizer)
        self.stop_ids = stop_ids
        self.prompt_seen = False

    def put(self, value: Any) -> None:
        """transformers' streamer protocol: the prompt first (skipped), then tensors of new ids."""
        if not self.prompt_seen:
            self.prompt_seen = True
            return
        self.put_ids(value.reshape(-1).tolist())

    def put_ids(self, ids: Sequence[int]) -> None:
        """New ids as ints (what prompter's engines call: no tensor, no prompt first).

        No torch call on this path: a torch call lets go of the GIL, and the thread that
        delivers every stream's tokens (the engine process's reader) then waited for a busy
        event loop to give it back, token by token.
        """
        stop_ids = self.stop_ids
        text = self.decoder.push([int(i) for i in ids if i not in stop_ids])
        if text:
            self.on_text(text)

    def end(self) -> None:
        text = self.decoder.push([], final=True)
        if text:
            self.on_text(text)
        self.on_end()

    def on_text(self, text: str) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def on_end(self) -> None:
        pass


def open_stream(streamer: Any, prompt: Sequence[int]) -> None:
    """Start *streamer* for a generation of *prompt*: a transformers streamer (``put``/``end`` only)
    takes the prompt as its first ``put``; prompter's own (with ``put_ids``) need nothing."""
    if not hasattr(streamer, "put_ids"):
        import torch

        streamer.put(torch.tensor([list(prompt)]))


def stream_ids(streamer: Any, ids: list[int]) -> None:
    """Give *streamer* the new *ids*: as ints where it takes them (``put_ids``), else as a tensor."""
    put_ids = getattr(streamer, "put_ids", None)
    if put_ids is not None:
        put_ids(ids)
    else:
        import torch

        streamer.put(torch.tensor(ids))


class _QueueStreamer(_TokenStreamer):
    """Pieces into a queue, read by iterating (what :func:`stream_deltas` consumes)."""

    _END = object()

    def __init__(self, tokenizer: Any, stop_ids: set[int]) -> None:
        super().__init__(tokenizer, stop_ids)
        self.queue: queue.Queue[object] = queue.Queue()

    def on_text(self, text: str) -> None:
        self.queue.put(text)

    def on_end(self) -> None:
        self.queue.put(self._END)

    def __iter__(self) -> Iterator[str]:
        while True:
            item = self.queue.get()
            if item is self._END:
                return
            yield str(item)

    def pieces_until(self, thread: threading.Thread) -> Iterator[str]:
        """The pieces, ending when *thread* (the generation) has ended too, even if ``end()`` never came.

        A generation cancelled before it began (its request's flag set while it
        waited for the model) returns without running ``generate``, which is what
        calls ``end()``; waiting for it would hang the stream forever.
        """
        while True:
            try:
                item = self.queue.get(timeout=0.05)
            except queue.Empty:
                if thread.is_alive() or not self.queue.empty():
                    continue
                return
            if item is self._END:
                return
            yield str(item)


def stop_token_streamer(tokenizer: Any, stop_ids: set[int]) -> Any:
    """A streamer for ``model.generate`` that yields the new text, without the text of *stop_ids*.

    Decoding is incremental (:class:`IncrementalDecoder`): the cost per token is
    bounded, where transformers' ``TextIteratorStreamer`` decodes the whole
    current line again at every token.
    """
    return _QueueStreamer(tokenizer, stop_ids)


class StopWatch(_TokenStreamer):
    """A streamer for a plain (not streamed) generation that sets :attr:`hit` when a stop string appears.

    Give it as ``streamer=`` and add :attr:`hit` to the flags the stopping
    criteria read: generation ends at the token that completes a stop string,
    at a cost linear in the answer (transformers' own ``stop_strings`` first
    builds a table over the whole vocabulary for every stop string, which for
    long stop strings holds the model for seconds to minutes).
    """

    def __init__(self, tokenizer: Any, stops: Sequence[str], stop_ids: set[int]) -> None:
        super().__init__(tokenizer, stop_ids)
        self.matcher = StopMatcher(stops)
        self.hit = threading.Event()

    def on_text(self, text: str) -> None:
        if not self.hit.is_set() and self.matcher.feed(text) is not None:
            self.hit.set()


class DeltaCutter:
    """The deltas of a stream, piece by piece: stop strings cut it, a tool-call marker holds the rest.

    Linear in the answer: stop strings and the tool-call marker are found by
    :class:`StopMatcher` over a bounded tail, and text held back is at most
    the longest of them (until a tool-call marker, after which all is held; for Llama, whose
    calls may also come as bare JSON, an answer that opens with ``{`` is held whole).
    Used by :func:`stream_deltas` (a thread's iterator) and by the server's event
    loop (:mod:`modules.local.stream_async`), so both stream alike.
    """

    def __init__(self, stops: tuple[str, ...], syntax: tuple[str, str | None] | None) -> None:
        self.syntax = syntax
        self.hold = max([len(s) for s in stops] + [len(syntax[0]) if syntax else 1]) - 1
        self.stop_at = StopMatcher(stops)
        self.marker_at = StopMatcher((syntax[0],)) if syntax else None
        self.bare = syntax is not None and syntax[0] in BARE_JSON_MARKERS  # a call may also come as bare JSON
        self.leading = True  # nothing but whitespace received yet
        self.received: list[str] = []
        self.n_received = self.n_sent = 0
        self.pending = ""  # received but not sent, while not holding for tool calls: at most hold + one piece
        self.held_for_tools = False
        self.cut: int | None = None
        """Where a stop string begins in the text (then the stream ends: stop feeding, stop generating)."""

    def feed(self, piece: str) -> StreamDelta | None:
        """The delta *piece* lets out (None: nothing settled yet)."""
        if not piece or self.cut is not None:
            return None
        self.cut = cut = self.stop_at.feed(piece)
        if self.marker_at is not None and not self.held_for_tools and self.marker_at.feed(piece) is not None:
            self.held_for_tools = True
        if self.leading and piece.strip():  # an answer that opens with "{" may be a bare JSON call (Llama): hold it
            self.leading = False
            self.held_for_tools = self.held_for_tools or (self.bare and piece.lstrip().startswith("{"))
        self.received.append(piece)
        self.n_received += len(piece)
        if self.held_for_tools:
            return None
        self.pending += piece
        upto = cut if cut is not None else self.n_received - self.hold
        ready = self.pending[: max(0, upto - self.n_sent)]
        if self.syntax:  # whitespace that may end the text before a tool call waits: the answer drops it
            ready = ready[: len(ready.rstrip())]
        if not ready:
            return None
        self.n_sent += len(ready)
        self.pending = self.pending[len(ready) :]
        return StreamDelta(text=ready)

    def finish(self, request: LocalRequest, outcome: dict[str, Any], usage: dict[str, int] | None) -> StreamDelta:
        """The last delta, once the generation has ended with *outcome* (``ids`` and ``finish``, or ``error``,
        which is raised); fills *usage* when given."""
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
        text = "".join(self.received)
        if self.cut is not None:
            text, finish = text[: self.cut], "stop"  # "cancelled" too: the cutter's owner stopped it, on a stop string
        sent = text[: self.n_sent]
        calls: tuple[ToolCall, ...] = ()
        if self.syntax:
            text, found = parse_tool_calls(text, *self.syntax, names=tool_names(request.tools))
            calls = tuple(found)
        rest = text[len(sent) :] if text.startswith(sent) else ""
        if calls:
            finish = "tool_calls"
        return StreamDelta(text=rest, tool_calls=calls, finish_reason=finish)


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
    markers (see :func:`~modules.local.tool_calls.tool_syntax_of`). What is held
    back and where the stream is cut: :class:`DeltaCutter`.
    """
    cutter = DeltaCutter(stops, syntax)
    try:
        pieces = streamer.pieces_until(thread) if isinstance(streamer, _QueueStreamer) else streamer
        for piece in pieces:
            delta = cutter.feed(piece)
            if cutter.cut is not None:
                flag.set()  # stop generating: the rest of the answer is cut anyway
            if delta is not None:
                yield delta
            if cutter.cut is not None:
                break
        thread.join()
        yield cutter.finish(request, outcome, usage)
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
