"""Gemini's ``generateContent`` REST API, as its public documentation specifies it.

Routes: ``POST /v1beta/models/{model}:generateContent`` and
``:streamGenerateContent?alt=sse``. Field names are accepted in either proto
JSON spelling (``systemInstruction`` or ``system_instruction``), as the API does.

Validated: the key (``x-goog-api-key`` or ``?key=``): missing -> 403
``PERMISSION_DENIED``, wrong -> 400 ``INVALID_ARGUMENT`` with reason
``API_KEY_INVALID`` (what the real API answers for an API key; 401
``UNAUTHENTICATED`` is its answer to a bad OAuth token); only documented
top-level and ``generationConfig`` fields ("Unknown name" otherwise);
``contents`` non-empty, roles ``user``/``model`` alternating and ending with a
``user`` turn; each part exactly one of ``text``, ``inlineData``, ``fileData``,
``functionCall`` (model turns), ``functionResponse`` (user turns, one per call
of the model turn before, naming its function, with an object ``response``);
function declarations named, OBJECT parameters with properties.

Answers: ``text`` or, when tools are given and the last turn is not a function
response, a ``functionCall`` of the first declared function (``tool_input``).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from wire.common import Answer, Received, Rejected, WireServer, json_answer, split_every

KEY = "AIza-test-0123456789abcdef"
_TOP = {"contents", "tools", "toolConfig", "safetySettings", "systemInstruction", "generationConfig", "cachedContent"}
_CONFIG = {
    "temperature", "topP", "topK", "maxOutputTokens", "stopSequences", "candidateCount", "seed", "presencePenalty",
    "frequencyPenalty", "responseMimeType", "responseSchema", "thinkingConfig", "responseLogprobs", "logprobs",
}  # fmt: skip
_DATA = {"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult"}
_PART = _DATA | {"thought", "thoughtSignature", "videoMetadata"}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def normal(value: Any) -> Any:
    """Keys in camelCase, as the API reads either spelling (values of ``args``/``response`` kept)."""
    if isinstance(value, dict):
        return {camel(k): (v if k in ("args", "response") else normal(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [normal(v) for v in value]
    return value


def error(status: int, state: str, message: str, reason: str | None = None) -> Rejected:
    body: dict[str, Any] = {"code": status, "message": message, "status": state}
    if reason:
        body["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}]
    return Rejected(status, {"error": body})


def bad(message: str) -> Rejected:
    return error(400, "INVALID_ARGUMENT", message)


class GeminiServer(WireServer):
    def __init__(self, text: str = "Hello from Gemini.", tool_input: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.text = text
        self.tool_input = tool_input if tool_input is not None else {"city": "Paris"}
        self.piece = 9
        self.parallel = 1  # function calls per answer
        # As a Gemini 3 model: each function call part carries a thoughtSignature, and a request whose
        # history holds one of this server's calls without its signature is refused (400).
        self.signatures = False
        self.issued: set[str] = set()

    def handle(self, request: Received) -> Answer:
        url = urlsplit(request.path)
        path = unquote(url.path)
        query = parse_qs(url.query)
        prefix = "/v1beta/models/"
        model, _, method = path.removeprefix(prefix).partition(":")
        if request.method != "POST" or not path.startswith(prefix) or not model:
            raise error(404, "NOT_FOUND", f"{request.method} {path} not found")
        if method not in ("generateContent", "streamGenerateContent"):
            raise error(404, "NOT_FOUND", f"unknown method {method!r}")
        key = request.headers.get("x-goog-api-key") or (query.get("key") or [None])[0]
        if not key:
            raise error(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers")
        if key != KEY:
            raise error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", "API_KEY_INVALID")
        if not isinstance(request.body, dict):
            raise bad("Invalid JSON payload received.")
        body = normal(request.body)
        validate(body)
        if self.signatures:
            self.check_signatures(body)
        last = body["contents"][-1]["parts"]
        answered = any("functionResponse" in part for part in last)
        declarations = [d for tool in body.get("tools", []) for d in tool.get("functionDeclarations", [])]
        if declarations and not answered:
            call = {"functionCall": {"name": declarations[0]["name"], "args": self.tool_input}}
            parts: list[dict[str, Any]] = [dict(call) for _ in range(self.parallel)]
            if self.signatures:
                for part in parts:
                    part["thoughtSignature"] = f"sig-{len(self.issued)}"
                    self.issued.add(part["thoughtSignature"])
        else:
            parts = [{"text": self.text}]
        usage = {"promptTokenCount": 9, "candidatesTokenCount": 4, "totalTokenCount": 13}
        if method == "generateContent":
            if query.get("alt"):
                raise bad("alt=sse is for streamGenerateContent")
            answer = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                      "usageMetadata": usage, "modelVersion": model, "responseId": "resp-1"}  # fmt: skip
            return json_answer(answer)
        if query.get("alt") != ["sse"]:
            raise bad("this test server streams only with alt=sse")
        return self.stream(model, parts, usage)

    def check_signatures(self, body: dict[str, Any]) -> None:
        for i, content in enumerate(body["contents"]):
            for j, part in enumerate(content["parts"]):
                if "functionCall" in part and part.get("thoughtSignature") not in self.issued:
                    raise bad(
                        f"Function call is missing a thought_signature in functionCall parts. This is required for "
                        f"tools to work correctly (contents[{i}].parts[{j}])"
                    )

    def stream(self, model: str, parts: list[dict[str, Any]], usage: dict[str, Any]) -> Answer:
        pieces: list[list[dict[str, Any]]] = []
        if "text" in parts[0]:
            text = parts[0]["text"]
            pieces = [[{"text": text[i : i + 5]}] for i in range(0, len(text), 5)]
        else:
            pieces = [parts]
        events = []
        for i, piece in enumerate(pieces):
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": piece}, "index": 0}
            chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": "resp-1"}
            if i == len(pieces) - 1:
                candidate["finishReason"] = "STOP"
                chunk["usageMetadata"] = usage
            events.append(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
        return Answer(200, {"Content-Type": "text/event-stream"}, chunks=split_every(b"".join(events), self.piece))


def validate(body: dict[str, Any]) -> None:
    for name in body:
        if name not in _TOP:
            raise bad(f'Invalid JSON payload received. Unknown name "{name}": Cannot find field.')
    for name, value in (body.get("generationConfig") or {}).items():
        if name not in _CONFIG:
            raise bad(f'Invalid JSON payload received. Unknown name "{name}" at \'generation_config\'')
        if name == "temperature" and not 0 <= value <= 2:
            raise bad("temperature must be between 0 and 2")
    calling = (body.get("toolConfig") or {}).get("functionCallingConfig")
    if calling is not None:
        if set(calling) - {"mode", "allowedFunctionNames"}:
            raise bad("Invalid JSON payload received. Unknown name at 'tool_config.function_calling_config'")
        if calling.get("mode", "AUTO") not in ("MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"):
            raise bad("Invalid value at 'tool_config.function_calling_config.mode'")
        if "allowedFunctionNames" in calling and calling.get("mode") not in ("ANY", "VALIDATED"):
            raise bad("allowed_function_names may only be set when mode is ANY or VALIDATED")
    system = body.get("systemInstruction")
    if system is not None:
        if not isinstance(system, dict) or not all("text" in p for p in system.get("parts") or [None]):
            raise bad("system_instruction: parts of text are required")
    names = set()
    for tool in body.get("tools") or []:
        for d in tool.get("functionDeclarations") or []:
            if not d.get("name"):
                raise bad("function_declarations[].name is required")
            params = d.get("parameters")
            if params and str(params.get("type")).upper() == "OBJECT" and not params.get("properties"):
                raise bad(f"function_declarations[{d['name']}].parameters.properties: should be non-empty for OBJECT type")
            names.add(d["name"])
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise bad("contents is not specified")
    calls: list[str] = []
    for i, content in enumerate(contents):
        role = content.get("role", "user") if isinstance(content, dict) else None
        if role not in ("user", "model"):
            raise bad(f"contents[{i}].role: Please use a valid role: user, model.")
        if role == ("model" if i % 2 == 0 else "user"):
            raise bad("Please ensure that multiturn requests alternate between user and model.")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise bad(f"contents[{i}].parts: must not be empty")
        calls = _parts(parts, i, role, calls)
    if contents[-1].get("role", "user") != "user":
        raise bad("Please ensure that multiturn requests ends with a user role or a function response.")


def _parts(parts: list[Any], i: int, role: str, calls: list[str]) -> list[str]:
    responses: list[str] = []
    made: list[str] = []
    for j, part in enumerate(parts):
        where = f"contents[{i}].parts[{j}]"
        if not isinstance(part, dict):
            raise bad(f"{where}: must be an object")
        unknown = sorted(set(part) - _PART)
        if unknown:
            raise bad(f'Invalid JSON payload received. Unknown name "{unknown[0]}" at \'{where}\': Cannot find field.')
        data = [k for k in part if k in _DATA]
        if len(data) != 1:
            raise bad(f"{where}: a part must have exactly one data field, got {data}")
        kind = data[0]
        value = part[kind]
        if kind == "text" and not isinstance(value, str):
            raise bad(f"{where}.text: must be a string")
        if kind == "text" and not value and not part.get("thought"):
            raise bad(f"{where}: Unable to submit request because it has an empty text parameter.")
        if kind == "inlineData" and not (isinstance(value, dict) and value.get("mimeType") and value.get("data")):
            raise bad(f"{where}.inline_data: mime_type and data are required")
        if kind == "fileData" and not (isinstance(value, dict) and value.get("fileUri")):
            raise bad(f"{where}.file_data: file_uri is required")
        if kind == "functionCall":
            if role != "model":
                raise bad(f"{where}: function_call is only allowed in a model turn")
            made.append(value.get("name"))
        if kind == "functionResponse":
            if role != "user":
                raise bad(f"{where}: function_response is only allowed in a user turn")
            if not isinstance(value.get("response"), dict):
                raise bad(f"{where}.function_response.response: must be an object")
            responses.append(value.get("name"))
    if role == "user" and (calls or responses) and sorted(responses) != sorted(calls):
        raise bad(
            "Please ensure that the number of function response parts is equal to the number of function call parts "
            "of the function call turn."
        )
    return made
