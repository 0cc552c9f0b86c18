"""Native answers speak OpenAI's names and counts: every finish reason one of OpenAI's, usage as OpenAI counts it.

docs/online.md promises ``finish_reason`` in OpenAI's names from every source (``stop``,
``length``, ``tool_calls``, ``content_filter``). Anthropic's ``refusal``,
``model_context_window_exceeded`` and ``pause_turn`` and Gemini's ``MALFORMED_FUNCTION_CALL``
and ``OTHER`` used to come through as they were. A Gemini thinking model's
``thoughtsTokenCount`` was left out of the total (OpenAI counts reasoning tokens as completion
tokens), and Gemini's ``responseId`` (it sends no request-id header) was not the request id.
The provider's own reason stays in ``raw``.
"""

from __future__ import annotations

from typing import Any

import pytest
from fault_server import FaultServer, Reply

from modules import OnlineChatModule

KEY = "sk-test-0123456789abcdef"


def _anthropic(stop_reason: str) -> dict[str, Any]:
    return {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": "partial"}], "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": 7, "output_tokens": 3},
    }  # fmt: skip


def _gemini(finish: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "partial"}]}, "finishReason": finish}],
        "usageMetadata": usage or {"promptTokenCount": 9, "candidatesTokenCount": 4, "totalTokenCount": 13},
        "modelVersion": "gemini-test",
        "responseId": "resp-7",
    }


def _respond(source: str, body: dict[str, Any]) -> Any:
    with FaultServer() as server:
        server.script.append(Reply(200, body))
        return OnlineChatModule(source, model="m", base_url=server.base_url, api_key=KEY, max_retries=0).respond("hi")


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("end_turn", "stop"), ("stop_sequence", "stop"), ("pause_turn", "stop"), ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"), ("tool_use", "tool_calls"), ("refusal", "content_filter"),
        ("a_reason_not_documented_yet", "stop"),
    ],
)  # fmt: skip
def test_every_anthropic_stop_reason_is_an_openai_finish_reason(reason: str, expected: str) -> None:
    response = _respond("anthropic", _anthropic(reason))
    assert response.finish_reason == expected
    assert response.raw["stop_reason"] == reason  # the provider's own, kept


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("STOP", "stop"), ("MAX_TOKENS", "length"), ("SAFETY", "content_filter"), ("RECITATION", "content_filter"),
        ("MALFORMED_FUNCTION_CALL", "stop"), ("OTHER", "stop"), ("LANGUAGE", "stop"),
        ("FINISH_REASON_UNSPECIFIED", "stop"),
    ],
)  # fmt: skip
def test_every_gemini_finish_reason_is_an_openai_finish_reason(reason: str, expected: str) -> None:
    response = _respond("gemini", _gemini(reason))
    assert response.finish_reason == expected
    assert response.raw["candidates"][0]["finishReason"] == reason


def test_a_gemini_thinking_models_thought_tokens_count_as_completion_tokens() -> None:
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "thoughtsTokenCount": 100, "totalTokenCount": 115}
    response = _respond("gemini", _gemini("STOP", usage))
    assert response.usage["prompt_tokens"] == 10
    assert response.usage["completion_tokens"] == 105
    assert response.usage["total_tokens"] == 115
    assert response.usage["thoughtsTokenCount"] == 100  # Gemini's own keys stay beside


def test_gemini_total_is_its_own_total_token_count() -> None:
    # tool-use prompt tokens count in Gemini's total and in neither of the other two
    usage = {"promptTokenCount": 9, "candidatesTokenCount": 4, "toolUsePromptTokenCount": 20, "totalTokenCount": 33}
    assert _respond("gemini", _gemini("STOP", usage)).usage["total_tokens"] == 33


def test_gemini_response_id_is_the_request_id() -> None:
    assert _respond("gemini", _gemini("STOP")).request_id == "resp-7"
