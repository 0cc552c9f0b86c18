"""Per-call settings in the spirit of the openai client's with_options: timeout, retries, headers."""

from __future__ import annotations

import pytest
from fault_server import FakeClock
from wire.anthropic import KEY, AnthropicServer
from wire.common import json_answer
from wire.gemini import KEY as GEMINI_KEY
from wire.gemini import GeminiServer

from modules import OnlineChatModule
from modules.errors import APIStatusError, RateLimitError
from modules.online.module import Timeout
from modules.online.retry import RetryPolicy

RATE_LIMITED = json_answer({"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}, 429)


def make(server: AnthropicServer) -> OnlineChatModule:
    clock = FakeClock()
    retry = RetryPolicy(sleep=clock.sleep, clock=clock.clock, random=lambda: 0.0)
    return OnlineChatModule("anthropic", model="c", api_key=KEY, base_url=server.base_url, retry=retry)


def test_with_options_changes_retries_for_that_handle_only():
    with AnthropicServer() as server:
        m = make(server)
        server.script.append(RATE_LIMITED)
        with pytest.raises(RateLimitError):
            m.with_options(max_retries=0)("hi")
        assert len(server.received) == 1
        server.script.append(RATE_LIMITED)
        assert m("hi") == "Hello from Claude."  # the module itself still retries
        assert len(server.received) == 3


def test_with_options_adds_headers_and_timeout_without_changing_the_module():
    with AnthropicServer() as server:
        m = make(server).prompt("Be brief.")
        quick = m.with_options(timeout=Timeout(connect=1, read=2, total=3), headers={"anthropic-beta": "demo-1"})
        assert quick("hi") == "Hello from Claude."
        assert server.received[0].headers["anthropic-beta"] == "demo-1"
        assert server.received[0].headers["anthropic-version"] == "2023-06-01"
        assert "Be brief." in server.received[0].body["system"]  # same prompter
        assert quick.timeout.total == 3 and m.timeout.total != 3
        assert m("hi") == "Hello from Claude."
        assert "anthropic-beta" not in server.received[1].headers


def test_with_options_refuses_unknown_settings():
    m = OnlineChatModule("anthropic", api_key=KEY)
    with pytest.raises(TypeError):
        m.with_options(temprature=0.5)  # type: ignore[call-arg]


def test_a_gemini_key_given_as_a_header_is_masked_when_echoed():
    other = "AIza-header-key-0123456789abcdef"
    with GeminiServer() as server:
        m = OnlineChatModule("gemini", model="g", api_key=GEMINI_KEY, base_url=server.base_url, max_retries=0)
        server.script.append(json_answer({"error": {"code": 400, "message": f"API key {other} not valid"}}, 400))
        with pytest.raises(APIStatusError) as info:
            m.with_options(headers={"x-goog-api-key": other})("hi")
        assert server.received[0].headers["x-goog-api-key"] in (other, GEMINI_KEY)
    assert other not in str(info.value) and other not in repr(info.value.body)


def test_openai_base_url_is_honoured_and_base_url_wins(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    assert OnlineChatModule().build_request("hi").url == "http://127.0.0.1:9/v1/chat/completions"
    assert OnlineChatModule("openai").build_request("hi").url == "http://127.0.0.1:9/v1/chat/completions"
    explicit = OnlineChatModule("openai", base_url="http://127.0.0.1:8/v1")
    assert explicit.build_request("hi").url == "http://127.0.0.1:8/v1/chat/completions"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert OnlineChatModule().build_request("hi").url == "https://api.openai.com/v1/chat/completions"
