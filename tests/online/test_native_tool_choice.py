"""OpenAI's ``tool_choice`` and ``parallel_tool_calls`` reach Anthropic and Gemini in their own shapes.

They went through as given: Anthropic refuses a bare ``"auto"`` (its ``tool_choice`` is an object)
and Gemini any unknown top-level field, so code that worked on ``source="openai"`` failed after only
switching the source. Each loopback server here rejects what its real API rejects. Also refused
before sending: an Anthropic temperature above 1 (its range is 0 to 1).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from wire.anthropic import KEY as ANTHROPIC_KEY
from wire.anthropic import AnthropicServer
from wire.gemini import KEY as GEMINI_KEY
from wire.gemini import GeminiServer

from modules import OnlineChatModule
from modules.errors import ModuleConfigError

WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
}
NAMED = {"type": "function", "function": {"name": "get_weather"}}


def _sent(server: Any) -> dict[str, Any]:
    body = server.received[-1].body
    return body if isinstance(body, dict) else json.loads(body)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", None, {"type": "none"}),
        (NAMED, None, {"type": "tool", "name": "get_weather"}),
        ({"type": "any"}, None, {"type": "any"}),  # Anthropic's own, as given
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
    ],
)
def test_anthropic_gets_tool_choice_in_its_own_shape(choice: Any, parallel: Any, expected: Any) -> None:
    options = {k: v for k, v in (("tool_choice", choice), ("parallel_tool_calls", parallel)) if v is not None}
    with AnthropicServer() as server:
        module = OnlineChatModule("anthropic", model="claude-test", base_url=server.base_url, api_key=ANTHROPIC_KEY)
        response = module.respond("Weather?", tools=[WEATHER], **options)
        assert response.finish_reason in ("tool_calls", "stop")
        assert _sent(server)["tool_choice"] == expected
        assert "parallel_tool_calls" not in _sent(server)


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"mode": "AUTO"}),
        ("required", {"mode": "ANY"}),
        ("none", {"mode": "NONE"}),
        (NAMED, {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}),
    ],
)
def test_gemini_gets_tool_choice_as_its_function_calling_config(choice: Any, expected: Any) -> None:
    with GeminiServer() as server:
        module = OnlineChatModule("gemini", model="gemini-test", base_url=server.base_url, api_key=GEMINI_KEY)
        module.respond("Weather?", tools=[WEATHER], tool_choice=choice, parallel_tool_calls=True)
        sent = _sent(server)
        assert sent["toolConfig"] == {"functionCallingConfig": expected}
        assert "tool_choice" not in sent and "parallel_tool_calls" not in sent


def test_a_tool_choice_neither_provider_knows_is_refused_before_sending() -> None:
    for source, key in (("anthropic", ANTHROPIC_KEY), ("gemini", GEMINI_KEY)):
        module = OnlineChatModule(source, model="m", base_url="http://127.0.0.1:9", api_key=key)
        with pytest.raises(ModuleConfigError, match="tool_choice: expected 'auto', 'required', 'none'"):
            module.build_request("hi", tools=[WEATHER], tool_choice="sometimes")


def test_gemini_refuses_parallel_tool_calls_false_and_a_second_function_calling_config() -> None:
    module = OnlineChatModule("gemini", model="m", base_url="http://127.0.0.1:9", api_key=GEMINI_KEY)
    with pytest.raises(ModuleConfigError, match="parallel_tool_calls=False"):
        module.build_request("hi", tools=[WEATHER], parallel_tool_calls=False)
    with pytest.raises(ModuleConfigError, match="give one of them"):
        module.build_request(
            "hi", tools=[WEATHER], tool_choice="auto", toolConfig={"functionCallingConfig": {"mode": "ANY"}}
        )


def test_an_anthropic_temperature_above_one_is_refused_before_sending() -> None:
    module = OnlineChatModule("anthropic", model="m", base_url="http://127.0.0.1:9", api_key=ANTHROPIC_KEY)
    with pytest.raises(ModuleConfigError, match="temperature: Anthropic takes 0 to 1, got 1.5"):
        module.build_request("hi", temperature=1.5)
    assert module.build_request("hi", temperature=1.0).body["temperature"] == 1.0
