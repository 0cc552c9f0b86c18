"""The request bodies of the OpenAI endpoints, as pydantic models (the OpenAPI schema comes from these)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

__all__ = [
    "ChatCompletionRequest",
    "CompletionRequest",
    "ContentPart",
    "FunctionCall",
    "FunctionDef",
    "Message",
    "Sampling",
    "StreamOptions",
    "Tool",
    "ToolCallIn",
]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class FunctionCall(_Open):
    name: str
    arguments: str | dict[str, Any] = "{}"


class ToolCallIn(_Open):
    id: str | None = None
    type: Literal["function"] = "function"
    function: FunctionCall


class ContentPart(_Open):
    type: str
    text: str | None = None


class Message(_Open):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCallIn] | None = None
    tool_call_id: str | None = None


class FunctionDef(_Open):
    name: str = Field(min_length=1, max_length=256)
    description: str | None = None
    parameters: dict[str, Any] | None = None


class Tool(_Open):
    type: Literal["function"] = "function"
    function: FunctionDef


class StreamOptions(_Open):
    include_usage: StrictBool | None = None


class Sampling(_Open):
    model: str
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    stop: str | list[str] | None = None
    seed: int | None = None
    n: int | None = Field(default=None, ge=1)  # above 1: a 400 "not supported" (one choice per request)
    stream: StrictBool | None = False
    stream_options: StreamOptions | None = None


class ChatCompletionRequest(Sampling):
    messages: list[Message] = Field(min_length=1)
    tools: list[Tool] | None = None
    tool_choice: Any = None
    max_completion_tokens: int | None = Field(default=None, ge=1)


class CompletionRequest(Sampling):
    prompt: str | list[str]
