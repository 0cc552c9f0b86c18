"""An assistant message whose tool calls are not all answered is a 400, as OpenAI answers it.

OpenAI's Chat Completions API refuses an assistant message with ``tool_calls``
unless each call's id is answered by one of the ``tool`` messages that follow it
("An assistant message with 'tool_calls' must be followed by tool messages
responding to each 'tool_call_id'. The following tool_call_ids did not have
response messages: ..."). The server rendered a conversation with a call left
unanswered, one the model never had. The 400 is OpenAI's envelope, its ``param``
the assistant message's ``tool_calls``, its message naming the unanswered ids.
"""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

USER = {"role": "user", "content": "Weather in Paris and Rome?"}
CALLS = [
    {"id": "call_paris", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
    {"id": "call_rome", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}},
]
ASK = {"role": "assistant", "content": None, "tool_calls": CALLS}
PARIS = {"role": "tool", "content": "sunny", "tool_call_id": "call_paris"}
ROME = {"role": "tool", "content": "rainy", "tool_call_id": "call_rome"}
OSLO_ASK = {"role": "assistant", "content": None, "tool_calls": [{**CALLS[0], "id": "call_oslo"}]}

UNANSWERED = [
    pytest.param([USER, ASK, PARIS], "messages[1].tool_calls", ["'call_rome'"], id="one-of-two-at-the-end"),
    pytest.param([USER, ASK, ROME, USER], "messages[1].tool_calls", ["'call_paris'"], id="one-of-two-then-user"),
    pytest.param([USER, ASK], "messages[1].tool_calls", ["'call_paris'", "'call_rome'"], id="none-at-the-end"),
    pytest.param(
        [USER, ASK, {"role": "assistant", "content": "Done."}, USER],
        "messages[1].tool_calls",
        ["'call_paris'", "'call_rome'"],
        id="none-then-assistant",
    ),
    pytest.param(
        [USER, ASK, PARIS, ROME, {"role": "assistant", "content": "ok"}, USER, OSLO_ASK, USER],
        "messages[6].tool_calls",
        ["'call_oslo'"],
        id="second-round",
    ),
    # (one call answered twice while the other is not: the second answer is named first, as a duplicate,
    # in test_server_a_tool_call_id_given_twice_is_refused.py)
]


def _post(module: TrainableModule, messages: list[dict[str, Any]], stream: bool) -> httpx.Response:
    body = {"model": "tiny", "messages": messages, "max_tokens": 2, "stream": stream}
    return httpx.post(module.url + "/chat/completions", json=body, timeout=60)


@pytest.mark.parametrize(("messages", "param", "ids"), UNANSWERED)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_tool_call_left_unanswered_is_refused(
    served_module: TrainableModule,  # noqa: F811
    messages: list[dict[str, Any]],
    param: str,
    ids: list[str],
    stream: bool,
) -> None:
    reply = _post(served_module, messages, stream)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert error["type"] == "invalid_request_error" and error["param"] == param, error
    assert error["message"].startswith(param + ": "), error
    assert all(i in error["message"] for i in ids) and "tool message" in error["message"], error


def test_the_official_client_gets_a_bad_request_error_naming_the_calls(served_module: TrainableModule) -> None:  # noqa: F811
    client = openai.OpenAI(base_url=served_module.url, api_key="unused", max_retries=0, timeout=60)
    messages: Any = [USER, ASK, PARIS]
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="tiny", max_tokens=2, messages=messages)
    body = raised.value.body
    assert isinstance(body, dict) and body["param"] == "messages[1].tool_calls" and "call_rome" in body["message"]


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param([USER, ASK, PARIS, ROME], id="each-call-answered"),
        pytest.param([USER, ASK, ROME, PARIS, USER], id="answered-out-of-order-then-user"),
        # (an empty ``tool_calls`` array is refused, as OpenAI refuses it: see
        # test_server_empty_arrays_are_refused_as_openai_refuses_them.py)
        pytest.param([USER, {"role": "assistant", "content": "Hi", "tool_calls": None}, USER], id="null-tool-calls"),
    ],
)
def test_tool_calls_each_answered_are_served(
    served_module: TrainableModule,  # noqa: F811
    messages: list[dict[str, Any]],
) -> None:
    reply = _post(served_module, messages, False)
    assert reply.status_code == 200, reply.text
