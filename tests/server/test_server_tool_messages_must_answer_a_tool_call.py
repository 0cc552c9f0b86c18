"""A tool message that answers no tool call is a 400, as OpenAI answers it, never rendered as if it did.

OpenAI refuses a ``tool`` message without a ``tool_call_id``, one whose id names
no call of the assistant message its run of tool messages follows, and one with
no such assistant message at all ("messages with role 'tool' must be a response
to a preceding message with 'tool_calls'"). The server took all three and
rendered a tool result the model never asked for. ``TrainableModule`` itself
keeps taking any conversation in Python: only the wire is checked.
"""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from tiny_model_fixture import served_module, started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

USER = {"role": "user", "content": "Weather in Paris and Rome?"}
CALLS = [
    {"id": "call_paris", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
    {"id": "call_rome", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}},
]
ASK = {"role": "assistant", "content": None, "tool_calls": CALLS}


def _tool(content: str, **extra: Any) -> dict[str, Any]:
    return {"role": "tool", "content": content, **extra}


def _post(module: TrainableModule, messages: list[dict[str, Any]], stream: bool = False) -> httpx.Response:
    body = {"model": "tiny", "messages": messages, "max_tokens": 2, "stream": stream}
    return httpx.post(module.url + "/chat/completions", json=body, timeout=60)


REFUSED = [
    pytest.param([USER, ASK, _tool("sunny")], "messages[2].tool_call_id", "needs its tool_call_id", id="no-id"),
    pytest.param(
        [USER, ASK, _tool("sunny", tool_call_id=None)], "messages[2].tool_call_id", "tool_call_id", id="null-id"
    ),
    pytest.param(
        [USER, ASK, _tool("sunny", tool_call_id="")], "messages[2].tool_call_id", "tool_call_id", id="empty-id"
    ),
    pytest.param(
        [USER, ASK, _tool("sunny", tool_call_id="call_london")],
        "messages[2].tool_call_id",
        "names no tool call of messages[1]",
        id="unknown-id",
    ),
    pytest.param(
        [USER, ASK, _tool("sunny", tool_call_id="call_paris"), _tool("rainy", tool_call_id="call_oslo")],
        "messages[3].tool_call_id",
        "'call_oslo' names no tool call of messages[1]",
        id="second-reply-unknown-id",
    ),
    pytest.param([USER, _tool("sunny", tool_call_id="call_paris")], "messages[1].role", "must answer", id="no-call"),
    pytest.param(
        [_tool("sunny", tool_call_id="call_paris"), USER], "messages[0].role", "must answer", id="first-message"
    ),
    pytest.param(
        [USER, {"role": "assistant", "content": "Let me think."}, _tool("sunny", tool_call_id="call_paris")],
        "messages[2].role",
        "must answer",
        id="after-an-assistant-without-calls",
    ),
    pytest.param(
        [USER, ASK, _tool("sunny", tool_call_id="call_paris"), USER, _tool("rainy", tool_call_id="call_rome")],
        "messages[4].role",
        "must answer",
        id="after-a-user-message",
    ),
    pytest.param(
        [
            USER,
            ASK,
            _tool("sunny", tool_call_id="call_paris"),
            _tool("rainy", tool_call_id="call_rome"),
            {"role": "assistant", "content": None, "tool_calls": [{**CALLS[0], "id": "call_again"}]},
            _tool("sunny", tool_call_id="call_rome"),
        ],
        "messages[5].tool_call_id",
        "names no tool call of messages[4]",
        id="an-earlier-assistants-call",
    ),
]


@pytest.mark.parametrize(("messages", "param", "said"), REFUSED)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_tool_message_that_answers_no_tool_call_is_refused(
    served_module: TrainableModule,  # noqa: F811
    messages: list[dict[str, Any]],
    param: str,
    said: str,
    stream: bool,
) -> None:
    reply = _post(served_module, messages, stream)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert error["type"] == "invalid_request_error" and error["param"] == param, error
    assert error["message"].startswith(param.rsplit(".", 1)[0]) and said in error["message"], error


def test_the_official_client_gets_a_bad_request_error(served_module: TrainableModule) -> None:  # noqa: F811
    client = openai.OpenAI(base_url=served_module.url, api_key="unused", max_retries=0, timeout=60)
    messages: Any = [USER, _tool("sunny", tool_call_id="call_paris")]
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="tiny", max_tokens=2, messages=messages)
    assert isinstance(raised.value.body, dict) and raised.value.body["param"] == "messages[1].role"


ANSWERED = [
    pytest.param(
        [USER, ASK, _tool("sunny", tool_call_id="call_paris"), _tool("rainy", tool_call_id="call_rome")],
        id="each-call-answered",
    ),
    pytest.param(
        [USER, ASK, _tool("rainy", tool_call_id="call_rome"), _tool("sunny", tool_call_id="call_paris")],
        id="answered-out-of-order",
    ),
    pytest.param(
        [
            USER,
            {**ASK, "content": "Checking both."},
            _tool("sunny", tool_call_id="call_paris"),
            _tool("rainy", tool_call_id="call_rome"),
            {"role": "assistant", "content": "Sunny in Paris, rainy in Rome."},
            {"role": "user", "content": "And Oslo?"},
            {"role": "assistant", "content": None, "tool_calls": [{**CALLS[0], "id": "call_oslo"}]},
            _tool("snow", tool_call_id="call_oslo"),
        ],
        id="two-rounds",
    ),
]


@pytest.mark.parametrize("messages", ANSWERED)
def test_tool_messages_that_answer_their_calls_are_served(
    served_module: TrainableModule,  # noqa: F811
    messages: list[dict[str, Any]],
) -> None:
    reply = _post(served_module, messages)
    assert reply.status_code == 200, reply.text


def test_trainable_module_in_python_still_takes_any_conversation(started_module: TrainableModule) -> None:  # noqa: F811
    request = started_module.build_request([USER, _tool("sunny")], max_new_tokens=1)
    assert [m["role"] for m in request.messages] == ["user", "tool"]
