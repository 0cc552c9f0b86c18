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

``POST /api/generate`` (one prompt, no conversation) as documented: ``model`` required;
``prompt``, ``suffix``, ``system``, ``template`` strings; ``raw`` a boolean, refused together
with ``template``, ``system`` or ``context`` ("raw mode does not support template, system, or
context"); ``images`` base64 strings; ``context`` a list of integers. Fields it does not know
(``messages``, ``tools``) are ignored as Go ignores them, so a chat body sent there has an empty
prompt: Ollama then only loads the model and answers ``response: ""`` with ``done_reason: "load"``.
The answer's text is in ``response``; streamed, one NDJSON line per piece.
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
        if request.method != "POST" or request.path not in ("/api/chat", "/api/generate"):
            raise bad("404 page not found", 404)
        if self.key is not None and request.headers.get("authorization") != f"Bearer {self.key}":
            raise bad("unauthorized", 401)
        body = request.body
        if not isinstance(body, dict):
            raise bad("invalid request body")
        if request.path == "/api/generate":
            return generated(self, body)
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


def validate_generate(body: dict[str, Any]) -> None:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad("model is required")
    if model != MODEL:
        raise bad(f'model "{model}" not found, try pulling it first', 404)
    for name in ("prompt", "suffix", "system", "template"):
        if name in body and not isinstance(body[name], str):
            raise bad(f"json: cannot unmarshal into Go struct field GenerateRequest.{name} of type string")
    for name in ("raw", "stream"):
        if name in body and not isinstance(body[name], bool):
            raise bad(f"json: cannot unmarshal into Go struct field GenerateRequest.{name} of type bool")
    if "options" in body and not isinstance(body["options"], dict):
        raise bad("json: cannot unmarshal into Go struct field GenerateRequest.options of type map[string]interface {}")
    if "format" in body and not (body["format"] in ("", "json") or isinstance(body["format"], dict)):
        raise bad("invalid format: expected \"json\" or a valid JSON schema")
    context = body.get("context")
    if context is not None and not (isinstance(context, list) and all(type(t) is int for t in context)):
        raise bad("json: cannot unmarshal into Go struct field GenerateRequest.context of type []int")
    images = body.get("images")
    if images is not None and not isinstance(images, list):
        raise bad("json: cannot unmarshal into Go struct field GenerateRequest.images of type []api.ImageData")
    for image in images or []:
        try:
            base64.b64decode(image, validate=True)
        except (binascii.Error, TypeError, ValueError):
            raise bad("illegal base64 data in images") from None
    if body.get("raw") and (body.get("template") or body.get("system") or context):
        raise bad("raw mode does not support template, system, or context")


def generated(server: OllamaServer, body: dict[str, Any]) -> Answer:
    """The answer of ``/api/generate`` to a valid ``body``."""
    validate_generate(body)
    head = {"model": body["model"], "created_at": "2026-01-01T00:00:00Z"}
    if not body.get("prompt") and not body.get("images"):  # nothing to answer: Ollama only loads the model
        return json_answer({**head, "response": "", "done": True, "done_reason": "load"})
    done: dict[str, Any] = {"done": True, "done_reason": "stop", "prompt_eval_count": 9, "eval_count": 5}
    if not body.get("raw"):
        done["context"] = [1, 2, 3]  # the conversation so far, as token ids (not in raw mode)
    if body.get("stream", True) is False:
        return json_answer({**head, "response": server.text, **done})
    lines = [{**head, "response": server.text[i : i + 4], "done": False} for i in range(0, len(server.text), 4)]
    lines.append({**head, "response": "", **done})
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    return Answer(200, {"Content-Type": "application/x-ndjson"}, chunks=split_every(data, server.piece))

