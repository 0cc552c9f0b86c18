"""A whole answer, for callers who need more than the text: :class:`Response`.

``m.respond(...)`` returns one for a plain call; ``m.stream(...)`` returns an
:class:`OnlineChatStream` whose ``response`` is one once the stream was read to
its end. Every source fills the same fields:

=================  ==============================================================
``text``           the answer text ("" when the model only called tools)
``tool_calls``     complete tool calls, in OpenAI's shape, from every provider
``finish_reason``  OpenAI's names (``stop``, ``length``, ``tool_calls``,
                   ``content_filter``) where the provider's reason maps onto one
``usage``          ``prompt_tokens``, ``completion_tokens``, ``total_tokens``
                   beside the provider's own counts; None if it sent none (an
                   OpenAI-compatible stream reports usage when the source is known
                   to accept ``stream_options.include_usage``, or when you pass it)
``model``          the model that answered, as the provider names it
``request_id``     the provider's request id header (``x-request-id``, ``request-id``), else Gemini's ``responseId``
``raw``            the decoded body (a plain call); None for a stream
=================  ==============================================================

Server-derived values are masked like everything else the module hands back.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from modules.base import ChatStream, Completion, StreamDelta, ToolCall

__all__ = ["OnlineChatStream", "Response", "StreamEnd", "body_request_id", "model_of", "request_id_of"]

_REQUEST_ID_HEADERS = ("x-request-id", "request-id", "x-goog-request-id")


@dataclass(frozen=True)
class Response:
    """A whole answer: text, tool calls, finish reason, usage, model, request id and the raw body."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: Mapping[str, Any] | None = None
    model: str | None = None
    request_id: str | None = None
    raw: Any = None
    thinking_blocks: tuple[dict[str, Any], ...] = ()

    @property
    def message(self) -> dict[str, Any]:
        """The assistant turn, in OpenAI message shape, ready to append to ``history`` (with Anthropic's
        ``thinking_blocks`` when the answer had some: a turn that called tools must send them back)."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            message = {"role": "assistant", "content": self.text or None, "tool_calls": list(self.tool_calls)}
        if self.thinking_blocks:
            message["thinking_blocks"] = [dict(block) for block in self.thinking_blocks]
        return message

    @classmethod
    def of(cls, completion: Completion, request_id: str | None) -> Response:
        return cls(
            text=completion.text,
            tool_calls=completion.tool_calls,
            finish_reason=completion.finish_reason,
            usage=completion.usage,
            model=model_of(completion.raw),
            request_id=request_id or body_request_id(completion.raw),
            raw=completion.raw,
            thinking_blocks=completion.thinking_blocks,
        )


def model_of(raw: Any) -> str | None:
    """The answering model named in a decoded body (``model``, or Gemini's ``modelVersion``)."""
    if not isinstance(raw, dict):
        return None
    value = raw.get("model", raw.get("modelVersion"))
    return value if isinstance(value, str) else None


def body_request_id(raw: Any) -> str | None:
    """A request id the body carries where no header does (Gemini's ``responseId``)."""
    value = raw.get("responseId") if isinstance(raw, Mapping) else None
    return value if isinstance(value, str) and value else None


def request_id_of(headers: Mapping[str, str]) -> str | None:
    for name in _REQUEST_ID_HEADERS:
        value = headers.get(name)
        if value:
            return value
    return None


@dataclass
class StreamEnd:
    """Filled by the module as a stream runs: the request id at once, the rest when it ends."""

    request_id: str | None = None
    usage: Mapping[str, Any] | None = None
    model: str | None = None
    ended: bool = False
    thinking_blocks: tuple[dict[str, Any], ...] = ()


class OnlineChatStream(ChatStream):
    """A :class:`~modules.base.ChatStream` that also gives the whole :class:`Response` at its end."""

    def __init__(self, deltas: Iterator[StreamDelta], end: StreamEnd) -> None:
        super().__init__(deltas)
        self.end = end

    @property
    def response(self) -> Response | None:
        """The whole answer once the stream was read to its end; None before."""
        if not self.end.ended:
            return None
        return Response(
            text=self.text,
            tool_calls=tuple(self.tool_calls),
            finish_reason=self.finish_reason,
            usage=self.end.usage,
            model=self.end.model,
            request_id=self.end.request_id,
            thinking_blocks=self.end.thinking_blocks,
        )
