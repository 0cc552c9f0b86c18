"""Google's Gemini API, natively: ``POST {base_url}/v1beta/models/{model}:generateContent``.

- **Request**: the prompter's ``format="gemini"`` body (``system_instruction``,
  ``contents`` of ``user``/``model`` turns of parts, ``function_declarations``)
  plus ``generationConfig`` from the call's options: ``max_tokens`` ->
  ``maxOutputTokens``, ``stop`` -> ``stopSequences``, ``temperature``,
  ``top_p`` -> ``topP``, ``top_k`` -> ``topK``, ``n`` -> ``candidateCount``,
  ``seed``, ``presence_penalty``/``frequency_penalty``. A ``generationConfig``
  option is merged in; OpenAI's ``tool_choice`` becomes ``toolConfig``'s
  ``functionCallingConfig``; any other option (``safetySettings``, ``toolConfig``...)
  goes to the top level as given. OpenAI's other fields (``response_format``,
  ``logprobs``, ``user``...) raise :class:`~modules.errors.ModuleConfigError` naming
  Gemini's own; so does ``labels`` (Vertex AI's, which the Gemini API answers with a 400).
  ``model=`` picks the model in the URL (``tunedModels/...`` a tuned model's).
- **Headers**: the key in ``x-goog-api-key`` (never in the URL).
- **Answer**: the first candidate's ``text`` parts are joined (``thought``
  parts left out); ``functionCall`` parts become OpenAI tool calls, with the
  call's ``id`` when Gemini gives one, else a fresh ``call_...`` id (the
  prompter maps it back to the function's name for the ``functionResponse``),
  and the part's ``thoughtSignature`` as ``extra_content.google.thought_signature``
  (the prompter sends it back with the call, as Gemini 3 requires);
  ``finishReason`` is mapped (``STOP`` -> ``stop``, or ``tool_calls`` when
  functions were called; ``MAX_TOKENS`` -> ``length``; safety reasons and a
  blocked prompt -> ``content_filter``; any other -> ``stop``, the raw answer
  keeping Gemini's); ``usageMetadata`` gets OpenAI's keys beside Gemini's
  (thought tokens counted as completion tokens, the total Gemini's own). An
  answer with no ``candidates`` and no ``promptFeedback.blockReason`` (another
  API's answer) raises :class:`~modules.errors.APIResponseValidationError`.
- **Stream**: ``:streamGenerateContent?alt=sse``: each event is a whole
  ``GenerateContentResponse`` carrying the next piece; the one with a
  ``finishReason`` ends it (there is no end marker). With ``n`` > 1 the
  candidates' pieces come interleaved, each named by its ``index``: only
  index 0's are read; once it has finished, a stream where another candidate
  was seen is read on to its end for the usage (the last event has the whole
  answer's), the others' pieces passed over. A stream that ends unfinished
  with none of its events carrying ``candidates`` raises the same error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from modules.base import Completion, StreamDelta, ToolCall
from modules.errors import APIResponseValidationError, ModuleConfigError, StreamError
from modules.online.dialects import (
    OPENAI_ONLY,
    Collected,
    Decoder,
    NativeFormat,
    Request,
    always,
    arguments_of,
    named_function,
    nested_options,
    new_call_id,
    openai_usage,
    refuse_options,
    sse_decoder,
    tool_call,
)
from modules.online.shape import NOT_JSON, invalid, loads, optional_str, read_object, shown
from modules.online.sse import ServerSentEvent

__all__ = ["GEMINI", "GeminiDialect"]

_CONFIG = {
    "max_tokens": "maxOutputTokens",
    "max_completion_tokens": "maxOutputTokens",
    "temperature": "temperature",
    "top_p": "topP",
    "top_k": "topK",
    "n": "candidateCount",
    "seed": "seed",
    "presence_penalty": "presencePenalty",
    "frequency_penalty": "frequencyPenalty",
}
_UNSUPPORTED = {
    **OPENAI_ONLY,
    "response_format": "pass generationConfig={'responseMimeType': 'application/json', 'responseSchema': ...}",
    "logprobs": "pass generationConfig={'responseLogprobs': True, 'logprobs': ...}",
    "top_logprobs": "pass generationConfig={'responseLogprobs': True, 'logprobs': ...}",
    "reasoning_effort": "pass generationConfig={'thinkingConfig': {'thinkingBudget': ...}}",
    "metadata": "it has no metadata field (labels={...} is Vertex AI's only: the Gemini API refuses it)",
    "labels": "labels are Vertex AI's only (google-genai refuses them for the Gemini API too); drop it",
}
_FILTERED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
_WHERE = "a Gemini stream event"


def finish_reason(reason: str | None, called: bool) -> str | None:
    if reason is None:
        return None
    if reason == "STOP":
        return "tool_calls" if called else "stop"
    if reason == "MAX_TOKENS":
        return "length"
    if reason in _FILTERED:
        return "content_filter"
    return "stop"  # OTHER, MALFORMED_FUNCTION_CALL...: OpenAI has no name for them (raw keeps Gemini's)


@dataclass
class _Chunk:
    text: str
    calls: list[ToolCall]
    finish: str | None
    usage: dict[str, Any] | None
    indices: frozenset[int]  # the index of each candidate this response carries


_MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE"}


def _function_calling(choice: Any, parallel: Any) -> dict[str, Any] | None:
    """``toolConfig``'s ``functionCallingConfig`` for OpenAI's ``tool_choice`` (``"auto"`` -> AUTO,
    ``"required"`` -> ANY, ``"none"`` -> NONE, a named function -> ANY with that one allowed)."""
    if parallel is False:
        raise ModuleConfigError("parallel_tool_calls=False: Gemini has no such setting (it may call several)")
    if parallel not in (None, True):
        raise ModuleConfigError(f"parallel_tool_calls: expected True or False, got {parallel!r}")
    if choice is None:
        return None
    if isinstance(choice, str) and choice in _MODES:
        return {"functionCallingConfig": {"mode": _MODES[choice]}}
    name = named_function(choice)
    if name is not None:
        return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [name]}}
    raise ModuleConfigError(
        "tool_choice: expected 'auto', 'required', 'none' or {'type': 'function', 'function': {'name': ...}} "
        f"(or Gemini's own toolConfig=...), got {choice!r}"
    )


def _usage(raw: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's usage keys from ``usageMetadata``: a thinking model's thought tokens count as completion
    tokens (as OpenAI counts reasoning tokens), and the total is Gemini's own ``totalTokenCount``."""
    answer, thoughts = raw.get("candidatesTokenCount"), raw.get("thoughtsTokenCount")
    if type(thoughts) is int and type(answer) in (int, type(None)):
        answer = (answer or 0) + thoughts
    usage = openai_usage(raw.get("promptTokenCount"), answer, raw)
    if type(raw.get("totalTokenCount")) is int:
        usage["total_tokens"] = raw["totalTokenCount"]
    return usage


def _first(candidates: list[Any], where: str) -> tuple[str, dict[str, Any] | None, frozenset[int]]:
    """The first candidate (``index`` 0; proto JSON may leave a 0 out) and its path, or None when this
    event carries none of it; and every candidate's index. With ``candidateCount`` > 1 a stream's events
    carry the candidates' pieces interleaved, each named by its ``index``: position 0 is not the first."""
    first: tuple[str, dict[str, Any] | None] = ("candidates[0]", None)
    seen: set[int] = set()
    for i, item in enumerate(candidates):
        here = f"candidates[{i}]"
        candidate = read_object(item, here, where)
        index = candidate.get("index", 0)
        if type(index) is not int or index < 0:
            raise invalid(f"{here}.index", "a non-negative integer", index, where)
        seen.add(index)
        if index == 0 and first[1] is None:
            first = (here, candidate)
    return first[0], first[1], frozenset(seen)


def _read(data: Any, where: str, whole: bool = False) -> _Chunk:
    """One ``GenerateContentResponse`` (``whole``: an answer, not a stream event): its first candidate's
    text, calls and raw finish reason, and usage."""
    body = read_object(data, "the top level", where)
    usage_data = body.get("usageMetadata")
    usage = None
    if usage_data is not None:
        raw = read_object(usage_data, "usageMetadata", where)
        usage = _usage(raw)
    candidates = body.get("candidates")
    if candidates is None:
        feedback = body.get("promptFeedback")
        blocked = isinstance(feedback, dict) and feedback.get("blockReason")
        if whole and not blocked:  # an answer is its candidates, or a blocked prompt's feedback
            raise no_candidates("the answer")
        return _Chunk("", [], "SAFETY" if blocked else None, usage, frozenset({0}))
    if not isinstance(candidates, list) or not candidates:
        raise invalid("candidates", "a non-empty array", candidates, where)
    path, candidate, seen = _first(candidates, where)
    if candidate is None:
        if whole:  # a whole answer holds every candidate
            raise invalid("candidates", "an array holding the candidate of index 0", candidates, where)
        return _Chunk("", [], None, usage, seen)
    finish = optional_str(candidate, "finishReason", path, where)
    content = candidate.get("content")
    if content is None:
        return _Chunk("", [], finish, usage, seen)
    content = read_object(content, f"{path}.content", where)
    parts = content.get("parts") or []
    if not isinstance(parts, list):
        raise invalid(f"{path}.content.parts", "an array", parts, where)
    texts: list[str] = []
    calls: list[ToolCall] = []
    for i, part in enumerate(parts):
        here = f"{path}.content.parts[{i}]"
        part = read_object(part, here, where)
        if "functionCall" in part:
            call = read_object(part["functionCall"], f"{here}.functionCall", where)
            name = call.get("name")
            if not isinstance(name, str) or not name:
                raise invalid(f"{here}.functionCall.name", "a non-empty string", name, where)
            args = call.get("args")
            if args is not None and not isinstance(args, dict):
                raise invalid(f"{here}.functionCall.args", "an object", args, where)
            ident = optional_str(call, "id", f"{here}.functionCall", where) or new_call_id()
            found = tool_call(ident, name, arguments_of(args))
            signature = optional_str(part, "thoughtSignature", here, where)
            if signature:  # sent back with the call in the next request (Gemini 3 requires it)
                found["extra_content"] = {"google": {"thought_signature": signature}}
            calls.append(found)
        elif "text" in part and not part.get("thought"):
            text = part["text"]
            if not isinstance(text, str):
                raise invalid(f"{here}.text", "a string", text, where)
            texts.append(text)
    return _Chunk("".join(texts), calls, finish, usage, seen)


def no_candidates(where: str) -> APIResponseValidationError:
    """The error for a Gemini answer (or a whole stream) that never carried ``candidates`` nor a blocked
    prompt's ``promptFeedback.blockReason``: another API's answer (an OpenAI-compatible one), or none."""
    return APIResponseValidationError(
        f"{where} has the wrong shape at candidates: expected a non-empty array of candidates (or "
        "promptFeedback.blockReason, for a blocked prompt), got none; the server does not speak Gemini's "
        "generateContent format (check base_url: source='gemini' expects Google's API root, such as "
        "https://generativelanguage.googleapis.com, and for an OpenAI-compatible endpoint use source='openai')"
    )


def _resource(model: str) -> str:
    """The model's resource name in the URL, as google-genai writes it: ``models/{model}``, or a tuned
    model's own ``tunedModels/{id}`` (``models/`` given by the caller is not doubled); the id is quoted."""
    for collection in ("models/", "tunedModels/"):
        if model.startswith(collection):
            return collection + quote(model.removeprefix(collection), safe="-._~")
    return "models/" + quote(model, safe="-._~")


class GeminiDialect:
    format: NativeFormat = "gemini"

    def request(self, base_url: str, model: str, prompt: Mapping[str, Any], options: dict[str, Any]) -> Request:
        refuse_options(options, _UNSUPPORTED, "Gemini")
        options = dict(options)
        name = str(options.pop("model", model))
        calling = _function_calling(options.pop("tool_choice", None), options.pop("parallel_tool_calls", None))
        config = nested_options(options, _CONFIG, "stopSequences", "generationConfig")
        body: dict[str, Any] = {**prompt, **options}
        if calling is not None:
            tool_config = body.get("toolConfig") or {}
            if not isinstance(tool_config, Mapping):
                raise ModuleConfigError(
                    f"toolConfig: expected a mapping (Gemini's ToolConfig object), got {type(tool_config).__name__}; "
                    "with tool_choice=..., pass toolConfig as a mapping or leave it out"
                )
            if "functionCallingConfig" in tool_config:
                raise ModuleConfigError("tool_choice and toolConfig.functionCallingConfig: give one of them")
            body["toolConfig"] = {**tool_config, **calling}
        if config:
            body["generationConfig"] = config
        url = f"{base_url}/v1beta/{_resource(name)}:generateContent"
        return Request(url=url, body=body)

    def streamed(self, url: str, body: Mapping[str, Any]) -> Request:
        return Request(url=url.replace(":generateContent", ":streamGenerateContent?alt=sse"), body=dict(body))

    def headers(self) -> dict[str, str]:
        return {}

    def auth(self, key: str) -> dict[str, str]:
        return {"x-goog-api-key": key}

    def completion(self, data: Any) -> Completion:
        chunk = _read(data, "the answer", whole=True)
        return Completion(
            text=chunk.text,
            tool_calls=tuple(chunk.calls),
            finish_reason=finish_reason(chunk.finish, bool(chunk.calls)),
            usage=chunk.usage,
            raw=data,
        )

    def is_auth_failure(self, status: int, body: Any) -> bool:
        """401, or the 400 Google answers for a wrong API key (an ``ErrorInfo`` with reason ``API_KEY_INVALID``)."""
        if status == 401:
            return True
        error = body.get("error") if isinstance(body, dict) else None
        details = error.get("details") if isinstance(error, dict) else None
        return isinstance(details, list) and any(
            isinstance(d, dict) and d.get("reason") == "API_KEY_INVALID" for d in details
        )

    def stream_state(
        self,
        scrub: Callable[[Any], Any],
        may_hide: Callable[[str], bool] | None = None,
        request_body: Mapping[str, Any] | None = None,
    ) -> GeminiStreamState:
        # asked for several candidates: the stream is read to its end, whose event has the whole usage
        config = (request_body or {}).get("generationConfig")
        count = config.get("candidateCount") if isinstance(config, Mapping) else None
        several = isinstance(count, int) and not isinstance(count, bool) and count > 1
        return GeminiStreamState(scrub=scrub, may_hide=may_hide or always, others=several)

    def decoder(self, max_line: int) -> Decoder:
        return sse_decoder(max_line)


@dataclass
class GeminiStreamState(Collected):
    """Folds ``streamGenerateContent`` events into deltas; function calls are handed on at the finish."""

    response_id: str | None = None  # Gemini's ``responseId``: the request id, as Gemini sends no header
    others: bool = field(default=False, repr=False)  # whether another candidate was seen (n > 1)
    events: int = field(default=0, repr=False)  # events read, and of them those that carried candidates
    answered: int = field(default=0, repr=False)

    @property
    def complete(self) -> bool:
        return self.finish_reason is not None

    @property
    def shape_error(self) -> APIResponseValidationError | None:
        """For a stream that ended unfinished: the error when none of its events carried candidates
        (another API's stream), rather than a stream cut short."""
        return no_candidates("the stream") if self.events and not self.answered else None

    def on_event(self, event: ServerSentEvent) -> StreamDelta | None:
        data = loads(event.data)
        if data is NOT_JSON:  # raised outside the handler: no __context__ holding the event
            raise APIResponseValidationError(f"stream event is not JSON: {self.scrub(event.data)[:200]!r}")
        data = self.masked(event.data, data)
        if isinstance(data, dict) and data.get("error"):
            error = data["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            raise StreamError(
                f"the server reported an error mid-stream: {shown(message, 500)}", body=data, partial_text=self.text
            )
        if self.done:
            return None  # nothing is expected after the finish (n = 1)
        self.events += 1
        self.answered += isinstance(data, dict) and data.get("candidates") is not None
        if isinstance(data, dict) and isinstance(data.get("modelVersion"), str):
            self.model = data["modelVersion"]
        if isinstance(data, dict) and isinstance(data.get("responseId"), str) and data["responseId"]:
            self.response_id = data["responseId"]
        if self.finish_reason is not None:  # the first candidate is whole: of the others' events, only the usage
            usage = data.get("usageMetadata") if isinstance(data, dict) else None
            if usage is not None:
                self.usage = _usage(read_object(usage, "usageMetadata", _WHERE))
            return None
        chunk = _read(data, _WHERE)
        if chunk.usage is not None:  # the last event's is the whole answer's
            self.usage = chunk.usage
        self.others = self.others or any(index != 0 for index in chunk.indices)
        self.add_text(chunk.text)
        self.calls += chunk.calls
        if chunk.finish is not None:
            self.finish_reason = finish_reason(chunk.finish, bool(self.calls))
            self.done = not self.others  # with candidateCount > 1, read on to the end: the last event has the usage
            return StreamDelta(text=chunk.text, tool_calls=tuple(self.calls), finish_reason=self.finish_reason)
        return StreamDelta(text=chunk.text) if chunk.text else None


GEMINI = GeminiDialect()
