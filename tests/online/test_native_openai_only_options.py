"""OpenAI-only request fields are refused for a native source before anything is sent, naming the native way.

The module accepts OpenAI's request fields as call keywords (``response_format``, ``user``,
``logprobs``, ``stream_options``...) and the local model's ``max_new_tokens``. A native source used
to put them at the top of its body as given: Anthropic and Gemini answer a field they do not know
with 400 (after a round trip, and a retry budget untouched only by luck), and Ollama drops it
unread, so ``response_format={"type": "json_object"}`` silently gave free text. Each is now a
``ModuleConfigError`` naming the provider's own field, and nothing reaches the server. The fields
a protocol does have keep passing through: Anthropic's ``metadata`` and ``service_tier``,
Ollama's ``logprobs`` and ``top_logprobs``.
"""

from __future__ import annotations

from typing import Any

import pytest
from wire.anthropic import KEY as ANTHROPIC_KEY
from wire.anthropic import AnthropicServer
from wire.common import WireServer
from wire.gemini import KEY as GEMINI_KEY
from wire.gemini import GeminiServer
from wire.ollama import OllamaServer

from modules import OnlineChatModule
from modules.errors import ModuleConfigError

OPENAI_ONLY: dict[str, Any] = {
    "response_format": {"type": "json_object"},
    "user": "user-1",
    "logit_bias": {"50256": -100},
    "stream_options": {"include_usage": True},
    "reasoning_effort": "low",
    "store": True,
    "modalities": ["text"],
    "audio": {"voice": "alloy", "format": "wav"},
    "prediction": {"type": "content", "content": "x"},
    "web_search_options": {},
    "verbosity": "low",
    "max_new_tokens": 5,
}
REMEDY = {
    ("anthropic", "user"): "metadata",
    ("anthropic", "reasoning_effort"): "thinking",
    ("gemini", "response_format"): "responseMimeType",
    ("gemini", "logprobs"): "responseLogprobs",
    ("gemini", "metadata"): "labels",
    ("ollama", "response_format"): "format=",
    ("ollama", "reasoning_effort"): "think=",
    ("anthropic", "max_new_tokens"): "max_tokens",
}
REFUSED = {
    "anthropic": {**OPENAI_ONLY, "logprobs": True, "top_logprobs": 2},
    "gemini": {**OPENAI_ONLY, "logprobs": True, "top_logprobs": 2, "metadata": {"a": "b"}, "service_tier": "auto"},
    "ollama": {**OPENAI_ONLY, "metadata": {"a": "b"}, "service_tier": "auto"},
}
CASES = [(source, name, value) for source, options in REFUSED.items() for name, value in options.items()]


def _server(source: str) -> tuple[WireServer, str | None]:
    if source == "anthropic":
        return AnthropicServer(), ANTHROPIC_KEY
    if source == "gemini":
        return GeminiServer(), GEMINI_KEY
    return OllamaServer(), None


@pytest.mark.parametrize(("source", "name", "value"), CASES, ids=[f"{s}-{n}" for s, n, _ in CASES])
def test_an_openai_only_option_is_refused_before_sending(source: str, name: str, value: Any):
    server, key = _server(source)
    with server, OnlineChatModule(source, model="m", base_url=server.base_url, api_key=key) as m:
        for call in (m, m.stream, m.respond):
            with pytest.raises(ModuleConfigError, match=repr(name)) as caught:
                call("hi", **{name: value})
            assert REMEDY.get((source, name), "") in str(caught.value)
        assert server.received == []


def test_an_openai_only_option_in_the_module_defaults_is_refused_too():
    with OllamaServer() as server:
        m = OnlineChatModule("ollama", model="m", base_url=server.base_url, generation={"response_format": {}})
        with pytest.raises(ModuleConfigError, match="format="):
            m("hi")
        assert server.received == []


def test_the_fields_a_protocol_has_still_pass_through():
    claude = OnlineChatModule("anthropic", api_key=ANTHROPIC_KEY)
    body = claude.build_request("hi", metadata={"user_id": "u1"}, service_tier="auto").body
    assert body["metadata"] == {"user_id": "u1"} and body["service_tier"] == "auto"
    ollama = OnlineChatModule("ollama", model="m")
    body = ollama.build_request("hi", logprobs=True, top_logprobs=2).body
    assert body["logprobs"] is True and body["top_logprobs"] == 2
