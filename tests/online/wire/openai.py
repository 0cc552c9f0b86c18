"""OpenAI's chat completions (``POST /v1/chat/completions``), as its public API reference specifies it.

Validated as the API validates (400 ``invalid_request_error`` otherwise): ``model`` required;
``messages`` a non-empty list; roles ``system``, ``developer``, ``user``, ``assistant``, ``tool``;
``name`` matching ``^[a-zA-Z0-9_-]+$``; content per role: system and developer
text (a string or text parts), user a string or ``text``/``image_url``/``input_audio``/``file``
parts (an image URL http(s) or a ``data:`` URL), assistant a string, text or ``refusal`` parts,
or null when it calls tools; a ``tool`` message answers a ``tool_call_id`` of the assistant
message right before it, and every call of that message is answered before anything else;
tool names match ``^[a-zA-Z0-9_-]{1,64}$``; ``stream`` a boolean.

Answers ``text``, or a call of the first tool when tools are given and the last message is not a
tool result; streamed as SSE chunks ending with ``data: [DONE]``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from wire.common import Answer, Received, Rejected, WireServer, json_answer, split_every

KEY = "sk-openai-test-0123456789abcdef"
_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")  # the API's pattern since 2024 (before: no whitespace nor <|\\/>)
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_PARTS = {
    "system": {"text"},
    "developer": {"text"},
    "user": {"text", "image_url", "input_audio", "file"},
    "assistant": {"text", "refusal"},
    "tool": {"text"},
}


def bad(message: str, status: int = 400, kind: str = "invalid_request_error") -> Rejected:
    return Rejected(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})


class OpenAIServer(WireServer):
    def __init__(self, text: str = "Hello from OpenAI.") -> None:
        super().__init__()
        self.text = text
        self.piece = 9

    @property
    def api_root(self) -> str:
        return self.base_url + "/v1"

    def handle(self, request: Received) -> Answer:
        if request.method != "POST" or request.path != "/v1/chat/completions":
            raise bad(f"Invalid URL ({request.method} {request.path})", 404)
        if request.headers.get("authorization") != f"Bearer {KEY}":
            raise bad("Incorrect API key provided.", 401, "invalid_api_key")
        body = request.body
        if not isinstance(body, dict):
            raise bad("We could not parse the JSON body of your request.")
        validate(body)
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        finish = "stop"
        if body.get("tools") and body["messages"][-1]["role"] != "tool":
            name = body["tools"][0]["function"]["name"]
            call = {"id": "call_w1", "type": "function", "function": {"name": name, "arguments": '{"city": "Paris"}'}}
            message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        head = {"id": "chatcmpl-1", "model": body["model"], "created": 0}
        if not body.get("stream"):
            usage = {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return json_answer({**head, "object": "chat.completion", "choices": [choice], "usage": usage})
        chunks = []
        text = message.get("content") or ""
        for i in range(0, len(text), 5):
            chunks.append({"index": 0, "delta": {"content": text[i : i + 5]}, "finish_reason": None})
        if "tool_calls" in message:
            calls = [{"index": 0, **message["tool_calls"][0]}]
            chunks.append({"index": 0, "delta": {"tool_calls": calls}, "finish_reason": None})
        chunks.append({"index": 0, "delta": {}, "finish_reason": finish})
        events = [{**head, "object": "chat.completion.chunk", "choices": [c]} for c in chunks]
        data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
        return Answer(200, {"Content-Type": "text/event-stream"}, chunks=split_every(data, self.piece))


def validate(body: dict[str, Any]) -> None:
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise bad("you must provide a model parameter")
    if "stream" in body and not isinstance(body["stream"], bool):
        raise bad("Invalid type for 'stream': expected a boolean.")
    if "stream_options" in body and not body.get("stream"):
        raise bad("The 'stream_options' parameter is only allowed when 'stream' is enabled.")
    for i, tool in enumerate(body.get("tools") or []):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not _TOOL_NAME.match(str(function.get("name", ""))):
            raise bad(f"Invalid 'tools[{i}].function.name': string does not match pattern.")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad("Invalid 'messages': empty array. Expected an array with minimum length 1.")
    pending: set[str] = set()  # calls of the last assistant message not answered yet
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise bad(f"Invalid type for '{where}': expected an object.")
        role = message.get("role")
        if role not in _PARTS:
            raise bad(f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'tool', "
                      "and 'developer'.")  # fmt: skip
        if pending and role != "tool":
            raise bad("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                      f"'tool_call_id'. The following tool_call_ids did not have response messages: {sorted(pending)}")  # fmt: skip
        name = message.get("name")
        if name is not None and (not isinstance(name, str) or not _NAME.match(name)):
            raise bad(f"Invalid '{where}.name': string does not match pattern. Expected a string that matches the "
                      "pattern '^[a-zA-Z0-9_-]+$'.")  # fmt: skip
        _check_content(message, role, where)
        if role == "assistant":
            pending = {c["id"] for c in message.get("tool_calls") or [] if isinstance(c, dict) and "id" in c}
        elif role == "tool":
            if message.get("tool_call_id") not in pending:
                raise bad("Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                          "with 'tool_calls'.")  # fmt: skip
            pending.discard(message["tool_call_id"])
    if pending:
        raise bad(f"The following tool_call_ids did not have response messages: {sorted(pending)}")


def _check_content(message: dict[str, Any], role: str, where: str) -> None:
    content = message.get("content")
    if content is None:
        if role == "assistant" and message.get("tool_calls"):
            return
        raise bad(f"Invalid value for '{where}.content': expected a string, got null.")
    if isinstance(content, str):
        return
    if not isinstance(content, list) or not content:
        raise bad(f"Invalid '{where}.content': expected a string or a non-empty array of content parts.")
    for j, part in enumerate(content):
        here = f"{where}.content[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in _PARTS[role]:
            allowed = " and ".join(f"'{k}'" for k in sorted(_PARTS[role]))
            raise bad(f"Invalid value: '{kind}'. Supported values are: {allowed}. ({here}.type)")
        if kind == "text" and not isinstance(part.get("text"), str):
            raise bad(f"Missing required parameter: '{here}.text'.")
        if kind == "image_url":
            url = (part.get("image_url") or {}).get("url") if isinstance(part.get("image_url"), dict) else None
            if not isinstance(url, str) or not url.startswith(("http://", "https://", "data:image/")):
                raise bad(f"Invalid '{here}.image_url.url': expected a URL or a base64-encoded data URL.")
