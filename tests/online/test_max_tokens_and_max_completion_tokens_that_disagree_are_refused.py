"""``max_tokens`` and ``max_completion_tokens`` name the same answer length: given both with different
values, every native dialect refuses the call before sending (a ModuleConfigError naming both), as the
local models do, instead of one silently winning (Anthropic kept ``max_tokens``, Gemini and Ollama
``max_completion_tokens``); given both with one value, it is sent once."""

from __future__ import annotations

import pytest

from modules import OnlineChatModule
from modules.errors import ModuleConfigError

SOURCES = {
    "anthropic": (lambda body: body["max_tokens"]),
    "gemini": (lambda body: body["generationConfig"]["maxOutputTokens"]),
    "ollama": (lambda body: body["options"]["num_predict"]),
}


def module(source: str) -> OnlineChatModule:
    return OnlineChatModule(source, model="some-model", api_key="demo-key-not-real-000", base_url="http://127.0.0.1:9")


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_disagreeing_lengths_are_refused_naming_both(source):
    with pytest.raises(ModuleConfigError, match="'max_tokens' and 'max_completion_tokens' disagree") as caught:
        module(source).build_request("hi", max_tokens=5, max_completion_tokens=7)
    assert "give one of them" in str(caught.value)


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_agreeing_lengths_are_sent_once(source):
    body = module(source).build_request("hi", max_tokens=7, max_completion_tokens=7).body
    assert SOURCES[source](body) == 7
    assert "max_completion_tokens" not in str(body)


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_either_alone_sets_the_length(source):
    for name in ("max_tokens", "max_completion_tokens"):
        assert SOURCES[source](module(source).build_request("hi", **{name: 9}).body) == 9
