"""The request bodies of the OpenAI endpoints, as pydantic models (the OpenAPI schema comes from these)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from modules.server.limits import MAX_MESSAGES, MAX_TOKENS, MAX_TOOLS

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
    # strict: a value of the wrong JSON type is a 400, never coerced ("1" is not a temperature,
    # true is not a max_tokens). Extra keys are kept: chat templates may read extra message keys,
    # and validation refuses top-level options the server cannot honour by name.
    model_config = ConfigDict(extra="allow", strict=True)


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


# OpenAI refuses an empty array where it takes one (``empty_array``: "expected an array with minimum
# length 1"): leave the key out, or send null where it takes one. A string may still be empty.
_Parts = Annotated[list[ContentPart], Field(min_length=1)]


class Message(_Open):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | _Parts | None = None
    name: str | None = None
    tool_calls: list[ToolCallIn] | None = Field(default=None, min_length=1)
    tool_call_id: str | None = None


class FunctionDef(_Open):
    name: str = Field(min_length=1, max_length=256)
    description: str | None = None
    parameters: dict[str, Any] | None = None


class Tool(_Open):
    type: Literal["function"] = "function"
    function: FunctionDef


class StreamOptions(_Open):
    # OpenAI's two fields; any other key is a 400 naming it, never silently ignored. Obfuscation
    # (random padding against length side channels on the internet) is not added: loopback
    # servers need none, and a client reads the chunks the same either way.
    model_config = ConfigDict(extra="forbid", strict=True)
    include_usage: StrictBool | None = None
    include_obfuscation: StrictBool | None = None


class Sampling(_Open):
    model: str
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    stop: str | list[str] | None = None
    # OpenAI's range, a signed 64-bit int: past it a 400, never a seed folded onto another one. The
    # bound is exclusive: FastAPI writes the schema's bounds as floats, and 2**63 - 1 is not one.
    seed: int | None = Field(default=None, ge=-(1 << 63), lt=1 << 63)
    n: int | None = Field(default=None, ge=1)  # above 1: a 400 "not supported" (one choice per request)
    stream: StrictBool | None = False
    stream_options: StreamOptions | None = None


class ChatCompletionRequest(Sampling):
    messages: list[Message] = Field(min_length=1, max_length=MAX_MESSAGES)
    tools: list[Tool] | None = Field(default=None, min_length=1, max_length=MAX_TOOLS)
    tool_choice: Any = None
    max_completion_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)


class CompletionRequest(Sampling):
    prompt: str | list[str]
    # 0 only scores the prompt (echo=true with logprobs): see modules.server.scoring
    max_tokens: int | None = Field(default=None, ge=0, le=MAX_TOKENS)
