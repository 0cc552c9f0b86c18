"""Server-sent events: an incremental parser, and the chat-completions stream on top of it.

Two layers, both pure (bytes in, values out; no sockets):

- :class:`SSEDecoder` follows the WHATWG event-stream rules: lines end with
  ``\\r\\n``, ``\\r`` or ``\\n``; ``:`` starts a comment (keep-alives such as
  ``: ping``); ``data:`` lines of one event are joined with ``\\n``; a blank
  line dispatches the event. Bytes may arrive in any chunking, split mid-line,
  between ``\\r`` and ``\\n`` or inside a UTF-8 character. An event not closed
  by a blank line when the bytes end is incomplete and discarded, as the spec
  says.
- :class:`ChatStreamState` reads the OpenAI chat-completions chunks carried by
  those events: text deltas, tool-call deltas keyed by ``index`` (accumulated
  into complete calls), the finish reason, ``[DONE]``, and error events
  (``event: error`` or ``data: {"error": ...}``).

Example:

>>> decoder = SSEDecoder()
>>> decoder.feed(b'data: {"a"')
[]
>>> decoder.feed(b': 1}\\r\\n: keep-alive\\r\\n\\r\\n')
[ServerSentEvent(data='{"a": 1}', event='message', id=None, retry=None)]
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from modules.base import StreamDelta, ToolCall
from modules.errors import APIResponseValidationError, StreamError

__all__ = ["ChatStreamState", "SSEDecoder", "ServerSentEvent", "iter_events"]


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event: ``event`` type (``"message"`` by default), ``data``, ``id``, ``retry``."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    """Incremental event-stream parser: :meth:`feed` bytes, get the events they complete."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""  # text after the last line terminator
        self._skip_lf = False  # the previous chunk ended with "\r": a leading "\n" belongs to it
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._first = True  # a leading BOM is dropped

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Parse ``chunk`` and return the events it completes (possibly none)."""
        text = self._utf8.decode(chunk)
        if not text:
            return []
        if self._first:
            self._first = False
            if text.startswith("\ufeff"):
                text = text[1:]
        if self._skip_lf:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        text = self._buffer + text
        events: list[ServerSentEvent] = []
        start = 0
        n = len(text)
        while True:
            cr = text.find("\r", start)
            lf = text.find("\n", start)
            if cr < 0 and lf < 0:
                break
            if cr < 0 or (0 <= lf < cr):
                end, nxt = lf, lf + 1
            elif cr + 1 < n:
                end, nxt = cr, cr + 2 if text[cr + 1] == "\n" else cr + 1
            else:  # "\r" is the last char: a terminator, and a "\n" may follow in the next chunk
                end, nxt = cr, cr + 1
                self._skip_lf = True
            event = self._line(text[start:end])
            if event is not None:
                events.append(event)
            start = nxt
        self._buffer = text[start:]
        return events

    def close(self) -> bool:
        """End of input. Returns True when an unfinished event or line was discarded."""
        tail = self._buffer + self._utf8.decode(b"", final=True)
        dropped = bool(tail) or bool(self._data) or bool(self._event)
        self._buffer = ""
        self._data = []
        self._event = ""
        return dropped

    def _line(self, line: str) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None  # comment / keep-alive
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            if value.isdigit():
                self._retry = int(value)
        return None  # unknown fields are ignored, as the spec says

    def _dispatch(self) -> ServerSentEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = ServerSentEvent(
            data="\n".join(self._data), event=self._event or "message", id=self._id, retry=self._retry
        )
        self._data = []
        self._event = ""
        return event


def iter_events(chunks: Iterable[bytes]) -> Iterator[ServerSentEvent]:
    """Events from an iterable of byte chunks (any chunking)."""
    decoder = SSEDecoder()
    for chunk in chunks:
        yield from decoder.feed(chunk)
    decoder.close()


def _error_message(error: Any) -> str:
    if isinstance(error, dict):
        msg = error.get("message") or error.get("msg") or error.get("code") or json.dumps(error)
        return str(msg)
    return str(error)


@dataclass
class _PartialCall:
    id: str = ""
    type: str = "function"
    name: str = ""
    arguments: str = ""


@dataclass
class ChatStreamState:
    """Folds chat-completions stream events into deltas, remembering the text, tool calls and end.

    Feed it each :class:`ServerSentEvent` with :meth:`on_event`; it returns the
    :class:`StreamDelta` to hand on (or None). ``done`` becomes True at
    ``[DONE]``; ``finish_reason`` is set when a choice finishes; ``complete``
    says whether the stream may end now without being cut short.
    Tool calls are emitted once, complete, when the stream finishes.
    """

    text: str = ""
    finish_reason: str | None = None
    done: bool = False
    usage: dict[str, Any] | None = None
    _calls: dict[int, _PartialCall] = field(default_factory=dict)
    _emitted_calls: bool = False

    @property
    def complete(self) -> bool:
        """True once ``[DONE]`` or a finish reason arrived."""
        return self.done or self.finish_reason is not None

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls accumulated so far, ordered by index."""
        return tuple(
            ToolCall(id=c.id, type="function", function={"name": c.name, "arguments": c.arguments})
            for _, c in sorted(self._calls.items())
        )

    def on_event(self, event: ServerSentEvent) -> StreamDelta | None:
        """Fold one event in; raise :class:`StreamError` for an error event."""
        data = event.data
        if event.event == "error":
            body = _loads_or_text(data)
            error = body.get("error", body) if isinstance(body, dict) else body
            raise StreamError(
                f"the server reported an error mid-stream: {_error_message(error)}",
                body=body,
                partial_text=self.text,
            )
        if data.strip() == "[DONE]":
            self.done = True
            return self._final_delta()
        if self.done:
            return None  # nothing is expected after [DONE]; ignore rather than fail
        try:
            chunk = json.loads(data)
        except ValueError:
            raise APIResponseValidationError(f"stream event is not JSON: {data[:200]!r}") from None
        if not isinstance(chunk, dict):
            raise APIResponseValidationError(f"stream event is not a JSON object: {data[:200]!r}")
        if chunk.get("error"):
            raise StreamError(
                f"the server reported an error mid-stream: {_error_message(chunk['error'])}",
                body=chunk,
                partial_text=self.text,
            )
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        text = ""
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue  # only the first choice is read (n=1)
            delta = choice.get("delta") or {}
            piece = delta.get("content")
            if isinstance(piece, str):
                text += piece
            for i, call in enumerate(delta.get("tool_calls") or ()):
                self._add_call_delta(call, i)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        self.text += text
        if self.finish_reason is not None:
            final = self._final_delta()
            if final is not None:
                return StreamDelta(text=text, tool_calls=final.tool_calls, finish_reason=self.finish_reason)
        return StreamDelta(text=text) if text else None

    def _add_call_delta(self, call: Any, position: int) -> None:
        if not isinstance(call, dict):
            return
        index = call.get("index", position)
        partial = self._calls.setdefault(index if isinstance(index, int) else position, _PartialCall())
        if call.get("id") and not partial.id:
            partial.id = call["id"]  # some providers repeat the id in every delta
        function = call.get("function") or {}
        name = function.get("name")
        if isinstance(name, str) and name and name != partial.name:
            partial.name += name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            partial.arguments += arguments
        elif isinstance(arguments, dict):  # a few providers send an object, not a string
            partial.arguments += json.dumps(arguments, ensure_ascii=False)

    def _final_delta(self) -> StreamDelta | None:
        if self._emitted_calls:
            return None
        self._emitted_calls = True
        return StreamDelta(tool_calls=self.tool_calls(), finish_reason=self.finish_reason)


def _loads_or_text(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data
