"""Anthropic's Messages API (``POST /v1/messages``), as its public documentation specifies it.

Validated: ``x-api-key`` (401 ``authentication_error`` when wrong or missing),
``anthropic-version`` (400 when missing), JSON content type, required ``model``,
``max_tokens`` and ``messages``; only the documented top-level fields; ``system``
only at the top level; roles ``user``/``assistant``, consecutive messages of one role combined into
one turn as the reference says (either may open: it states no rule on the first role); block types ``text`` (non-empty;
a turn of whitespace-only text blocks and nothing else is refused, and so is a last assistant turn, a prefill,
whose last text block ends in whitespace, as the API answers both), ``image`` (base64 with a supported
media type, or url), ``tool_use`` (assistant only), ``tool_result`` (user only,
first in its message, answering each ``tool_use`` of the turn before);
``temperature`` in [0, 1]; stop sequences with a non-whitespace character; tools with a valid name
and an object ``input_schema``.

Answers: a text message (``text``), or a ``tool_use`` of the first tool
(``tool_input``) when tools are given and the last turn is not a tool result.
Streams send every documented event, ``ping`` included, in pieces of
``piece`` bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from wire.common import Answer, Received, Rejected, WireServer, json_answer, split_every

KEY = "sk-ant-test-0123456789abcdef"
_TOP = {
    "model", "messages", "max_tokens", "system", "stop_sequences", "stream", "temperature", "top_p", "top_k",
    "tools", "tool_choice", "metadata", "thinking", "service_tier",
}  # fmt: skip
_MEDIA = {"image/jpeg", "image/png", "image/gif", "image/webp"}
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def error(status: int, kind: str, message: str) -> Rejected:
    return Rejected(status, {"type": "error", "error": {"type": kind, "message": message}}, {"request-id": "req_err"})


def bad(message: str) -> Rejected:
    return error(400, "invalid_request_error", message)


class AnthropicServer(WireServer):
    def __init__(self, text: str = "Hello from Claude.", tool_input: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.text = text
        self.tool_input = tool_input if tool_input is not None else {"city": "Paris"}
        self.piece = 7
        self.parallel = 1  # tool calls per answer
        self.signed: set[str] = set()  # signatures of the thinking blocks this server wrote

    def handle(self, request: Received) -> Answer:
        if request.method != "POST" or request.path != "/v1/messages":
            raise error(404, "not_found_error", f"{request.method} {request.path} not found")
        if request.headers.get("x-api-key") != KEY:
            raise error(401, "authentication_error", "invalid x-api-key")
        if not request.headers.get("anthropic-version"):
            raise bad("anthropic-version: header is required")
        if not request.headers.get("content-type", "").startswith("application/json"):
            raise bad("content-type must be application/json")
        body = request.body
        if not isinstance(body, dict):
            raise bad("the body must be a JSON object")
        validate(body)
        thinking = _thinking_on(body)
        if thinking:
            self.check_thinking(body)
        last = body["messages"][-1]
        answered = isinstance(last["content"], list) and any(b["type"] == "tool_result" for b in last["content"])
        blocks: list[dict[str, Any]]
        if body.get("tools") and not answered:
            tool = body["tools"][0]["name"]
            blocks = [{"type": "tool_use", "id": "toolu_01A" if i == 0 else f"toolu_0{i + 1}A", "name": tool, "input": self.tool_input}
                      for i in range(self.parallel)]  # fmt: skip
            stop = "tool_use"
            if thinking:  # extended thinking: the answer opens with a signed thinking block
                signature = f"EqQBCgIYAh{len(self.signed)}"
                self.signed.add(signature)
                blocks.insert(0, {"type": "thinking", "thinking": "The user wants the weather.", "signature": signature})
        else:
            blocks = [{"type": "text", "text": self.text}]
            stop = "end_turn"
        if body.get("stream"):
            return self.stream(body["model"], blocks, stop)
        message = {
            "id": "msg_01", "type": "message", "role": "assistant", "model": body["model"], "content": blocks,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 5},
        }  # fmt: skip
        return json_answer(message, headers={"request-id": "req_01"})

    def stream(self, model: str, blocks: list[dict[str, Any]], stop: str) -> Answer:
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": {
                "id": "msg_01", "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 1}}}),
            ("ping", {"type": "ping"}),
        ]  # fmt: skip
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                text = block["text"]
                deltas = [{"type": "text_delta", "text": text[j : j + 4]} for j in range(0, len(text), 4)]
            elif block["type"] == "thinking":
                start = {"type": "thinking", "thinking": "", "signature": ""}
                text = block["thinking"]
                deltas = [{"type": "thinking_delta", "thinking": text[j : j + 6]} for j in range(0, len(text), 6)]
                deltas.append({"type": "signature_delta", "signature": block["signature"]})
            else:
                start = {**block, "input": {}}
                raw = json.dumps(block["input"])
                deltas = [{"type": "input_json_delta", "partial_json": raw[j : j + 5]} for j in range(0, len(raw), 5)]
            events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
            events += [("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}) for d in deltas]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 5}}))  # fmt: skip
        events.append(("message_stop", {"type": "message_stop"}))
        data = b"".join(sse(name, value) for name, value in events)
        return Answer(200, {"Content-Type": "text/event-stream", "request-id": "req_01"}, chunks=split_every(data, self.piece))


    def check_thinking(self, body: dict[str, Any]) -> None:
        """As the API with thinking on: the last assistant turn, when it called tools, opens with a thinking
        block (signed by this server, unchanged)."""
        messages = body["messages"]
        turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        if not turns:
            return
        i = turns[-1]
        content = messages[i]["content"]
        if not (isinstance(content, list) and any(b.get("type") == "tool_use" for b in content)):
            return
        first = content[0]
        if first.get("type") not in ("thinking", "redacted_thinking"):
            raise bad(
                f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                f"`{first.get('type')}`. When `thinking` is enabled, a final `assistant` message must start with "
                "a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks)."
            )
        if first["type"] == "thinking" and first.get("signature") not in self.signed:
            raise bad(f"messages.{i}.content.0: Invalid `signature` in `thinking` block")


def _thinking_on(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    if thinking is None:
        return False
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled"):
        raise bad("thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled'")
    if thinking["type"] == "enabled" and (type(thinking.get("budget_tokens")) is not int or thinking["budget_tokens"] < 1024):
        raise bad("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
    return thinking["type"] == "enabled"


def sse(name: str, value: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(value)}\n\n".encode()


def _check_cache_marks(body: dict[str, Any]) -> None:
    """``cache_control`` as the prompt-caching docs give it: ``{"type": "ephemeral"}``, ``"ttl"`` ``"5m"`` or ``"1h"``
    optional, on system blocks, tools and message content blocks (tool results' own blocks too), four at most."""
    system = body.get("system")
    blocks = [*(system if isinstance(system, list) else []), *(body.get("tools") or [])]
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            inner = block.get("content") if isinstance(block, dict) else None
            blocks += [block, *(inner if isinstance(inner, list) else [])]
    marks = [b["cache_control"] for b in blocks if isinstance(b, dict) and "cache_control" in b]
    for mark in marks:
        if not isinstance(mark, dict) or mark.get("type") != "ephemeral" or set(mark) - {"type", "ttl"}:
            raise bad("cache_control: Input tag does not match the expected tag: 'ephemeral'")
        if "ttl" in mark and mark["ttl"] not in ("5m", "1h"):
            raise bad("cache_control.ttl: Input should be '5m' or '1h'")
    if len(marks) > 4:
        raise bad(f"A maximum of 4 blocks with cache_control may be provided. Found {len(marks)}.")


def validate(body: dict[str, Any]) -> None:
    extra = sorted(set(body) - _TOP)
    if extra:
        raise bad(f"{extra[0]}: Extra inputs are not permitted")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise bad("model: Field required")
    tokens = body.get("max_tokens")
    if type(tokens) is not int or tokens < 1:
        raise bad("max_tokens: Field required")
    temperature = body.get("temperature", 0)
    if not isinstance(temperature, (int, float)) or not 0 <= temperature <= 1:
        raise bad("temperature: Input should be less than or equal to 1")
    system = body.get("system")
    if system is not None and not isinstance(system, (str, list)):
        raise bad("system: Input should be a valid string or list")
    for j, block in enumerate(system if isinstance(system, list) else []):
        if not isinstance(block, dict) or block.get("type") != "text" or not block.get("text"):
            raise bad(f"system.{j}: system blocks must be non-empty text blocks")
    _check_cache_marks(body)
    choice = body.get("tool_choice")
    if choice is not None:
        # a discriminated union: an object whose type is auto | any | tool | none ("tool" names the tool)
        if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
            raise bad("tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', 'tool', 'none'")
        if choice["type"] == "tool" and not isinstance(choice.get("name"), str):
            raise bad("tool_choice.tool.name: Field required")
        if set(choice) - {"type", "name", "disable_parallel_tool_use"}:
            raise bad("tool_choice: Extra inputs are not permitted")
    stops = body.get("stop_sequences")
    if stops is not None and not (isinstance(stops, list) and all(isinstance(s, str) for s in stops)):
        raise bad("stop_sequences: Input should be a valid list of strings")
    if stops and not all(s.strip() for s in stops):
        raise bad("stop_sequences: each stop sequence must contain non-whitespace")
    for i, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or not _NAME.match(str(tool.get("name", ""))):
            raise bad(f"tools.{i}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise bad(f"tools.{i}.input_schema: Input should be an object schema")
        if set(tool) - {"name", "description", "input_schema", "type", "cache_control"}:
            raise bad(f"tools.{i}: Extra inputs are not permitted")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad("messages: at least one message is required")
    turns: list[tuple[int, dict[str, Any]]] = []  # "Consecutive user or assistant turns in your request will
    for i, message in enumerate(messages):  # be combined into a single turn" (the Messages reference)
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            raise bad(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if turns and role == turns[-1][1]["role"]:
            turns[-1] = (turns[-1][0], {"role": role, "content": _blocks(turns[-1][1], i) + _blocks(message, i)})
        else:
            turns.append((i, message))
    pending: set[str] = set()
    for i, message in turns:
        pending = _content(message, i, pending)
        blocks = _blocks(message, i)
        if all(isinstance(b, dict) and b.get("type") == "text" and not str(b.get("text", "")).strip() for b in blocks):
            raise bad(f"messages.{i}: text content blocks must contain non-whitespace text")
    last = _blocks(turns[-1][1], turns[-1][0])[-1]
    if turns[-1][1]["role"] == "assistant" and isinstance(last, dict) and last.get("type") == "text":
        if last["text"] != last["text"].rstrip():
            raise bad("messages: final assistant content cannot end with trailing whitespace")
    if pending:
        raise bad("tool_use ids were found without tool_result blocks immediately after")


def _blocks(message: dict[str, Any], i: int) -> list[Any]:
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            raise bad(f"messages.{i}: text content blocks must be non-empty")
        return [{"type": "text", "text": content}]
    if not isinstance(content, list) or not content:
        raise bad(f"messages.{i}.content: Input should be a valid string or a non-empty list")
    return content


def _content(message: dict[str, Any], i: int, pending: set[str]) -> set[str]:
    content = message.get("content")
    role = message["role"]
    if isinstance(content, str):
        if not content:
            raise bad(f"messages.{i}: text content blocks must be non-empty")
        if pending:
            raise bad(f"messages.{i}: tool_use ids were found without tool_result blocks immediately after")
        return set()
    if not isinstance(content, list) or not content:
        raise bad(f"messages.{i}.content: Input should be a valid string or a non-empty list")
    uses: set[str] = set()
    results_done = False
    for j, block in enumerate(content):
        where = f"messages.{i}.content.{j}"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            if not isinstance(block.get("text"), str) or not block["text"]:
                raise bad(f"{where}: text content blocks must be non-empty")
            results_done = True
        elif kind == "image":
            if role != "user":
                raise bad(f"{where}: images are only accepted in user messages")
            source = block.get("source") or {}
            if source.get("type") == "base64":
                if source.get("media_type") not in _MEDIA or not isinstance(source.get("data"), str):
                    raise bad(f"{where}.source: a base64 image needs a supported media_type and data")
            elif source.get("type") != "url" or not isinstance(source.get("url"), str):
                raise bad(f"{where}.source: Input tag does not match 'base64' or 'url'")
            results_done = True
        elif kind in ("thinking", "redacted_thinking"):
            if role != "assistant":
                raise bad(f"{where}: thinking blocks are only accepted in assistant messages")
            needed = ("thinking", "signature") if kind == "thinking" else ("data",)
            if any(not isinstance(block.get(name), str) for name in needed) or set(block) - {"type", *needed}:
                raise bad(f"{where}: a {kind} block needs exactly {', '.join(needed)}")
        elif kind == "tool_use":
            if role != "assistant":
                raise bad(f"{where}: tool_use blocks are only accepted in assistant messages")
            if not isinstance(block.get("id"), str) or not isinstance(block.get("input"), dict):
                raise bad(f"{where}: a tool_use block needs an id and an input object")
            uses.add(block["id"])
        elif kind == "tool_result":
            if role != "user":
                raise bad(f"{where}: tool_result blocks are only accepted in user messages")
            if results_done:
                raise bad(f"{where}: tool_result blocks must come first in the user message")
            if block.get("tool_use_id") not in pending:
                raise bad(f"{where}: unexpected tool_use_id found in tool_result blocks: {block.get('tool_use_id')}")
            pending = pending - {block["tool_use_id"]}
        else:
            raise bad(f"{where}.type: Input tag {kind!r} found using 'type' does not match any of the expected tags")
    if role == "user" and pending:
        raise bad(f"messages.{i}: tool_use ids were found without tool_result blocks immediately after")
    return uses
