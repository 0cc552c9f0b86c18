"""Ollama's native chat API (``POST /api/chat``), as its public documentation specifies it.

Validated (Ollama decodes JSON into Go structs, so wrong types are 400s while
unknown fields are ignored): ``model`` required and known (404 "not found, try
pulling it first" otherwise); ``messages`` with roles ``system``, ``user``,
``assistant``, ``tool``; ``content`` a string; ``images`` a list of base64
strings; ``tool_calls`` with ``function.arguments`` an object; a ``tool``
message answering a call made before; ``options`` an object, ``stream`` a
boolean (absent: true, as Ollama streams by default). With ``key`` set, a
Bearer token is required (401), as behind Ollama's cloud.

Answers: ``text``, or a tool call of the first tool (``tool_input``) when tools
are given and the last message is not a tool result; streams are NDJSON.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from wire.common import Answer, Received, Rejected, WireServer, json_answer, split_every

MODEL = "llama-test"


def bad(message: str, status: int = 400) -> Rejected:
    return Rejected(status, {"error": message})


class OllamaServer(WireServer):
    def __init__(self, text: str = "Hello from Ollama.", key: str | None = None) -> None:
        super().__init__()
        self.text = text
        self.key = key
        self.tool_input: dict[str, Any] = {"city": "Paris"}
        self.piece = 6
        self.parallel = 1  # tool calls per answer

    def handle(self, request: Received) -> Answer:
        if request.method != "POST" or request.path != "/api/chat":
            raise bad("404 page not found", 404)
        if self.key is not None and request.headers.get("authorization") != f"Bearer {self.key}":
            raise bad("unauthorized", 401)
        body = request.body
        if not isinstance(body, dict):
            raise bad("invalid request body")
        validate(body)
        last = body["messages"][-1] if body["messages"] else {}
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if body.get("tools") and last.get("role") != "tool":
            name = body["tools"][0]["function"]["name"]
            calls = [{"function": {"name": name, "arguments": self.tool_input}}] * self.parallel
            message = {"role": "assistant", "content": "", "tool_calls": calls}
        done = {"done": True, "done_reason": "stop", "total_duration": 1000, "prompt_eval_count": 11, "eval_count": 6}
        head = {"model": body["model"], "created_at": "2026-01-01T00:00:00Z"}
        if body.get("stream", True) is False:
            return json_answer({**head, "message": message, **done})
        lines = []
        text = message["content"]
        for i in range(0, len(text), 4):
            lines.append({**head, "message": {"role": "assistant", "content": text[i : i + 4]}, "done": False})
        if "tool_calls" in message:
            lines.append({**head, "message": message, "done": False})
        lines.append({**head, "message": {"role": "assistant", "content": ""}, **done})
        data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
        return Answer(200, {"Content-Type": "application/x-ndjson"}, chunks=split_every(data, self.piece))


def validate(body: dict[str, Any]) -> None:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad("model is required")
    if model != MODEL:
        raise bad(f'model "{model}" not found, try pulling it first', 404)
    if "stream" in body and not isinstance(body["stream"], bool):
        raise bad("json: cannot unmarshal into Go struct field ChatRequest.stream of type bool")
    if "options" in body and not isinstance(body["options"], dict):
        raise bad("json: cannot unmarshal into Go struct field ChatRequest.options of type map[string]interface {}")
    if "format" in body and not (body["format"] in ("", "json") or isinstance(body["format"], dict)):
        raise bad("invalid format: expected \"json\" or a valid JSON schema")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise bad("json: cannot unmarshal into Go struct field ChatRequest.messages of type []api.Message")
    called: set[str] = set()
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise bad(f"{where}: json: cannot unmarshal into Go value of type api.Message")
        role = message.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            raise bad(f"{where}: invalid role {role!r}")
        if not isinstance(message.get("content", ""), str):
            raise bad(f"json: cannot unmarshal array into Go struct field Message.{where}.content of type string")
        for image in message.get("images") or []:
            try:
                base64.b64decode(image, validate=True)
            except (binascii.Error, TypeError, ValueError):
                raise bad(f"{where}.images: illegal base64 data") from None
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("arguments"), dict):
                raise bad(f"json: cannot unmarshal into Go struct field {where}.tool_calls.function.arguments of type map")
            called.add(function.get("name"))
        if role == "tool":
            if not called:
                raise bad(f"{where}: a tool message answers no tool call")
            if "tool_name" in message and message["tool_name"] not in called:
                raise bad(f"{where}: tool_name {message['tool_name']!r} was not called")
