"""Ollama's plain-prompt API: ``POST {base_url}/api/generate``, streamed as newline-delimited JSON.

Chosen with ``OnlineChatModule(source="ollama", format="ollama_generate")``.

- **Request**: the prompter's ``format="ollama_generate"`` body -- the whole conversation as one
  ``prompt`` (system prompt, history header, one ``name: text`` line per message) and images as
  base64 ``images`` -- plus ``model``, ``stream`` (always sent) and ``options`` mapped from the
  common options as for ``/api/chat``. Ollama's own fields are call keywords: ``raw`` (the
  prompt goes to the model untemplated), ``suffix``, ``system``, ``template``, ``context``,
  ``format``, ``keep_alive``, ``think``. ``raw=True`` with ``system``, ``template`` or
  ``context`` is refused before sending, as Ollama refuses it. No tools: ``/api/generate`` has
  none (the prompter refuses them, naming ``format="ollama"``).
- **Answer**: the text in ``response``; ``done_reason`` is the finish reason (OpenAI's names, as
  for ``/api/chat``); usage from ``prompt_eval_count``/``eval_count``; ``context`` stays in the raw body.
- **Stream**: one JSON object a line, pieces in ``response``, the last with ``done: true``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from modules.base import Completion, StreamDelta
from modules.errors import APIResponseValidationError, ModuleConfigError, StreamError
from modules.online.dialects import Collected, NativeFormat, Request, always, nested_options, refuse_options
from modules.online.ollama import OPTION_NAMES, UNSUPPORTED, NDJSONDecoder, finish_reason, usage_of
from modules.online.shape import NOT_JSON, invalid, loads, optional_str, read_object, shown
from modules.online.sse import ServerSentEvent

__all__ = ["OLLAMA_GENERATE", "OllamaGenerateDialect"]

_WHERE = "an Ollama /api/generate stream line"
_NOT_WITH_RAW = ("system", "template", "context")


def _text(body: Mapping[str, Any], where: str) -> str:
    """The ``response`` text (a string; absent or null: none)."""
    text = body.get("response")
    if text is None:
        return ""
    if not isinstance(text, str):
        raise invalid("response", "a string", text, where)
    return text


class OllamaGenerateDialect:
    format: NativeFormat = "ollama_generate"

    def request(self, base_url: str, model: str, prompt: Mapping[str, Any], options: dict[str, Any]) -> Request:
        refuse_options(options, UNSUPPORTED, "Ollama")
        options = dict(options)
        options.pop("n", None)
        if options.get("raw"):
            clash = [name for name in _NOT_WITH_RAW if options.get(name)]
            if clash:
                raise ModuleConfigError(
                    f"raw=True with {clash[0]}=...: Ollama's /api/generate refuses raw mode together with a "
                    "system, a template or a context (the prompt is sent as is); put it in the prompt, or drop raw"
                )
        native = nested_options(options, OPTION_NAMES, "stop", "options")
        body: dict[str, Any] = {"model": options.pop("model", model), **prompt, "stream": False, **options}
        if native:
            body["options"] = native
        return Request(url=base_url + "/api/generate", body=body)

    def streamed(self, url: str, body: Mapping[str, Any]) -> Request:
        return Request(url=url, body={**body, "stream": True})

    def headers(self) -> dict[str, str]:
        return {}

    def auth(self, key: str) -> dict[str, str]:
        return {"Authorization": "Bearer " + key}

    def completion(self, data: Any) -> Completion:
        body = read_object(data, "the top level")
        return Completion(
            text=_text(body, "the answer"),
            finish_reason=finish_reason(optional_str(body, "done_reason", "the top level"), False),
            usage=usage_of(body),
            raw=data,
        )

    def is_auth_failure(self, status: int, body: Any) -> bool:
        return status == 401

    def stream_state(
        self,
        scrub: Callable[[Any], Any],
        may_hide: Callable[[str], bool] | None = None,
        request_body: Mapping[str, Any] | None = None,
    ) -> GenerateStreamState:
        return GenerateStreamState(scrub=scrub, may_hide=may_hide or always)

    def decoder(self, max_line: int) -> NDJSONDecoder:
        return NDJSONDecoder(max_line=max_line)


@dataclass
class GenerateStreamState(Collected):
    """Folds the NDJSON lines of ``/api/generate`` into deltas."""

    @property
    def complete(self) -> bool:
        return self.done

    def on_event(self, event: ServerSentEvent) -> StreamDelta | None:
        data = loads(event.data)
        if data is NOT_JSON:  # raised outside the handler: no __context__ holding the line
            raise APIResponseValidationError(f"stream line is not JSON: {self.scrub(event.data)[:200]!r}")
        body = read_object(self.masked(event.data, data), "the top level", _WHERE)
        if body.get("error"):
            raise StreamError(
                f"the server reported an error mid-stream: {shown(body['error'], 500)}",
                body=body,
                partial_text=self.text,
            )
        if self.done:
            return None
        self.model = optional_str(body, "model", "the top level", _WHERE) or self.model
        text = _text(body, _WHERE)
        self.add_text(text)
        done = body.get("done")
        if done is not None and not isinstance(done, bool):
            raise invalid("done", "a boolean", done, _WHERE)
        if not done:
            return StreamDelta(text=text) if text else None
        self.done = True
        self.usage = usage_of(body)
        self.finish_reason = finish_reason(optional_str(body, "done_reason", "the top level", _WHERE), False) or "stop"
        return StreamDelta(text=text, finish_reason=self.finish_reason)


OLLAMA_GENERATE = OllamaGenerateDialect()
