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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from modules.base import StreamDelta, ToolCall
from modules.errors import APIResponseValidationError, StreamError
from modules.online.shape import NOT_JSON, invalid, loads, optional_str, read_arguments, read_object, shown, text_of

__all__ = ["ChatStreamState", "SSEDecoder", "ServerSentEvent", "iter_events", "joined"]

_RETRY_DIGITS = 18  # the longest "retry:" field read (milliseconds: some 30 million years)

_join = "".join  # one name for the one place pieces of a line are joined (tests count its calls)


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event: ``event`` type (``"message"`` by default), ``data``, ``id``, ``retry``."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    """Incremental event-stream parser: :meth:`feed` bytes, get the events they complete.

    Linear in the input: an unfinished line is kept as a list of pieces and
    joined once, when its terminator arrives (appending each chunk to one
    growing string would copy a long line again for every chunk). Each
    terminator search starts where the previous one ended.

    ``max_line``: the longest line accepted, in characters (None: no limit);
    a longer one raises :class:`~modules.errors.APIResponseValidationError` as
    soon as it is longer, before it is joined.
    """

    def __init__(self, max_line: int | None = None) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending: list[str] = []  # pieces of the line after the last terminator
        self._pending_size = 0
        self._skip_lf = False  # the previous chunk ended with "\r": a leading "\n" belongs to it
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._first = True  # a leading BOM is dropped
        self.max_line = max_line

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
        events: list[ServerSentEvent] = []
        start = 0
        n = len(text)
        cr = text.find("\r")
        lf = text.find("\n")
        while cr >= 0 or lf >= 0:
            if cr < 0 or (0 <= lf < cr):
                end, nxt = lf, lf + 1
            elif cr + 1 < n:
                end, nxt = cr, cr + 2 if text[cr + 1] == "\n" else cr + 1
            else:  # "\r" is the last char: a terminator, and a "\n" may follow in the next chunk
                end, nxt = cr, cr + 1
                self._skip_lf = True
            self._check_size(end - start)
            line = text[start:end]
            if self._pending:
                self._pending.append(line)
                line = _join(self._pending)
                self._pending = []
                self._pending_size = 0
            event = self._line(line)
            if event is not None:
                events.append(event)
            start = nxt
            # search again only for a terminator already passed (each character is scanned once)
            if 0 <= cr < start:
                cr = text.find("\r", start)
            if 0 <= lf < start:
                lf = text.find("\n", start)
        if start < n:
            self._check_size(n - start)
            self._pending.append(text[start:] if start else text)
            self._pending_size += n - start
        return events

    def _check_size(self, more: int) -> None:
        if self.max_line is not None and self._pending_size + more > self.max_line:
            raise APIResponseValidationError(
                f"a server-sent-events line is longer than {self.max_line} characters: "
                "raise the limit (OnlineChatModule(max_response_bytes=...)) if the answer is really that large"
            )

    def flush(self) -> list[ServerSentEvent]:
        """End of input: no more events (an event not closed by a blank line is incomplete, as the spec says)."""
        return []

    def close(self) -> bool:
        """End of input. Returns True when an unfinished event or line was discarded."""
        tail = _join(self._pending) + self._utf8.decode(b"", final=True)
        dropped = bool(tail) or bool(self._data) or bool(self._event)
        self._pending = []
        self._pending_size = 0
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
            # ASCII digits only, as the spec says ("²" is a digit to str.isdigit, not to int); a value longer
            # than any delay (and than int() reads: 4300 digits) is ignored like any other unreadable one
            if value.isascii() and value.isdigit() and len(value) <= _RETRY_DIGITS:
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
        error = error.get("message") or error.get("msg") or error.get("code") or error
    return shown(error, 500)


_WHERE = "a stream event"


def _same(value: Any) -> Any:
    return value


def _always(data: str) -> bool:
    return True


@dataclass
class _PartialCall:
    id: str = ""
    type: str = "function"
    name: str = ""
    arguments: list[str] = field(default_factory=list)  # the pieces, joined once at the end (linear)
    extra: dict[str, Any] | None = None  # extra_content (Gemini's OpenAI-compatible API: a thought signature)


@dataclass
class ChatStreamState:
    """Folds chat-completions stream events into deltas, remembering the text, tool calls and end.

    Feed it each :class:`ServerSentEvent` with :meth:`on_event`; it returns the
    :class:`StreamDelta` to hand on (or None). ``done`` becomes True at
    ``[DONE]``; ``finish_reason`` is set when a choice finishes; ``complete``
    says whether the stream may end now without being cut short.
    Tool calls are emitted once, complete, when the stream finishes.
    """

    finish_reason: str | None = None
    done: bool = False
    usage: dict[str, Any] | None = None
    model: str | None = None
    scrub: Callable[[Any], Any] = field(default=_same, repr=False)  # masks secrets in each decoded event
    may_hide: Callable[[str], bool] = field(default=_always, repr=False)  # False: scrub can be skipped
    _calls: dict[int, _PartialCall] = field(default_factory=dict)
    _shift: int = 0  # added to an index-less call delta's place in its chunk (see _add_call_delta)
    _emitted_calls: bool = False
    _pieces: list[str] = field(default_factory=list, repr=False)  # the text, joined only when read

    @property
    def text(self) -> str:
        """The text received so far (joined once per read: ``+=`` on a growing string is quadratic)."""
        return joined(self._pieces)

    @property
    def complete(self) -> bool:
        """True once ``[DONE]`` or a finish reason arrived."""
        return self.done or self.finish_reason is not None

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls accumulated so far, ordered by index (each one assembled, then masked).

        A stream that ends with a tool call without a name is of the wrong shape.
        """
        calls = []
        for index, c in sorted(self._calls.items()):
            if not c.name:
                raise invalid(f"tool call {index}: function.name", "a non-empty string", c.name, _WHERE)
            call = ToolCall(
                id=self.scrub(c.id),
                type="function",
                function={"name": self.scrub(c.name), "arguments": self.scrub(joined(c.arguments))},
            )
            if c.extra is not None:
                call["extra_content"] = c.extra
            calls.append(call)
        return tuple(calls)

    def on_event(self, event: ServerSentEvent) -> StreamDelta | None:
        """Fold one event in; raise :class:`StreamError` for an error event.

        A chunk of the wrong shape raises :class:`APIResponseValidationError`
        naming the path of the wrong value (see :mod:`modules.online.shape`).
        """
        data = event.data
        if event.event == "error":
            body = self.scrub(_loads_or_text(data))
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
        chunk = loads(data)
        if chunk is NOT_JSON:  # raised outside the handler: its __context__ would hold the event
            raise APIResponseValidationError(f"stream event is not JSON: {self.scrub(data)[:200]!r}")
        if self.may_hide(data):
            chunk = self.scrub(chunk)
        chunk = read_object(chunk, "the top level", _WHERE)
        if chunk.get("error"):
            raise StreamError(
                f"the server reported an error mid-stream: {_error_message(chunk['error'])}",
                body=chunk,
                partial_text=self.text,
            )
        model = chunk.get("model")
        if isinstance(model, str) and model:
            self.model = model  # for the whole response at the end
        usage = chunk.get("usage")
        if usage is not None and not isinstance(usage, dict):
            raise invalid("usage", "an object or null", usage, _WHERE)
        if usage:
            self.usage = usage
        choices = chunk.get("choices")
        if choices is None:
            choices = []
        if not isinstance(choices, list):
            raise invalid("choices", "an array", choices, _WHERE)
        text = ""
        for i, choice in enumerate(choices):
            here = f"choices[{i}]"
            choice = read_object(choice, here, _WHERE)
            index = choice.get("index")
            if index is None:  # absent or null: its place in the array, as the whole answer reads it
                index = i
            if type(index) is not int:
                raise invalid(f"{here}.index", "an integer", index, _WHERE)
            if index != 0:
                continue  # only the first choice is read (n=1)
            delta = choice.get("delta")
            delta = {} if delta is None else read_object(delta, f"{here}.delta", _WHERE)
            text += text_of(delta.get("content"), f"{here}.delta.content", _WHERE)
            calls = delta.get("tool_calls")
            if calls is not None and not isinstance(calls, list):
                raise invalid(f"{here}.delta.tool_calls", "an array or null", calls, _WHERE)
            for position, call in enumerate(calls or ()):
                self._add_call_delta(call, position, f"{here}.delta.tool_calls[{position}]")
            finish = optional_str(choice, "finish_reason", here, _WHERE)
            if finish:
                self.finish_reason = finish
        if text:
            self._pieces.append(text)
        if self.finish_reason is not None:
            final = self._final_delta()
            if final is not None:
                return StreamDelta(text=text, tool_calls=final.tool_calls, finish_reason=self.finish_reason)
        return StreamDelta(text=text) if text else None

    def _add_call_delta(self, call: Any, position: int, path: str) -> None:
        """Fold one tool-call delta in, by its ``index``; without one (Gemini's OpenAI-compatible API
        sends each call whole in a chunk of its own, with its own ``id``), by its place in the chunk,
        unless it brings an ``id`` other than that of the call there, which already has an id and a
        name: then it is the next call (and the chunk's later index-less deltas follow it)."""
        call = read_object(call, path, _WHERE)
        index = call.get("index")
        ident = optional_str(call, "id", path, _WHERE)
        if index is None:  # absent or null: read by its place, as a whole answer's calls are
            index = self._shift + position
            there = self._calls.get(index)
            if there is not None and there.name and there.id and ident and ident != there.id:
                index = max(self._calls) + 1
                self._shift = index - position
        if type(index) is not int:
            raise invalid(f"{path}.index", "an integer", index, _WHERE)
        function = call.get("function")
        function = {} if function is None else read_object(function, f"{path}.function", _WHERE)
        name = optional_str(function, "name", f"{path}.function", _WHERE)
        arguments = read_arguments(function.get("arguments"), f"{path}.function.arguments", _WHERE)
        partial = self._calls.setdefault(index, _PartialCall())
        if ident and not partial.id:
            partial.id = ident  # some providers repeat the id in every delta
        if name and name != partial.name:
            partial.name += name
        if arguments:
            partial.arguments.append(arguments)
        extra = call.get("extra_content")
        if isinstance(extra, dict) and extra:
            partial.extra = extra

    def _final_delta(self) -> StreamDelta | None:
        if self._emitted_calls:
            return None
        self._emitted_calls = True
        return StreamDelta(tool_calls=self.tool_calls(), finish_reason=self.finish_reason)


def joined(pieces: list[str]) -> str:
    """The pieces of a growing text as one string, kept joined in ``pieces`` for the next read.

    Text that arrives in many small pieces is appended to a list and joined when
    read, so receiving it stays linear in its length.
    """
    if len(pieces) > 1:
        pieces[:] = ["".join(pieces)]
    return pieces[0] if pieces else ""


def _loads_or_text(data: str) -> Any:
    """``data`` decoded as JSON, or else ``data`` itself."""
    value = loads(data)
    return data if value is NOT_JSON else value
