"""A tool call id given twice, by two calls of one message or by two tool messages, is a 400, as OpenAI answers it.

OpenAI refuses both ("Invalid parameter: Duplicate value for 'tool_call_id' of 'a' in messages[7] and
messages[8]."): which result answers which call would be a guess. The server's table of calls was built
with ``dict.fromkeys(ids)``: two calls sharing an id became one, answered by one tool message, and a second
tool message answering an answered call overwrote nothing; both conversations were rendered and served
(200). The 400 names the second use of the id (``param``) and the first.
"""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

USER = {"role": "user", "content": "Weather in Paris and Rome?"}


def _call(call_id: str, city: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": f'{{"city": "{city}"}}'}}


def _ask(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def _answer(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


PARIS, ROME = _call("call_paris", "Paris"), _call("call_rome", "Rome")

DUPLICATES = [
    pytest.param(
        [USER, _ask(PARIS, {**ROME, "id": "call_paris"}), _answer("call_paris", "sunny")],
        "messages[1].tool_calls[1].id",
        ["'call_paris'", "messages[1].tool_calls[0]"],
        id="two-calls-of-one-message-share-an-id",
    ),
    pytest.param(
        [USER, _ask(PARIS, {**ROME, "id": "call_paris"}), _answer("call_paris", "a"), _answer("call_paris", "b")],
        "messages[1].tool_calls[1].id",
        ["'call_paris'", "messages[1].tool_calls[0]"],
        id="two-calls-share-an-id-each-answered",
    ),
    pytest.param(
        [USER, _ask(PARIS), _answer("call_paris", "sunny"), _answer("call_paris", "rainy")],
        "messages[3].tool_call_id",
        ["'call_paris'", "messages[2]"],
        id="one-call-answered-twice",
    ),
    pytest.param(
        # a call answered twice while another goes unanswered: the tool message at fault is named first
        [USER, {**_ask(PARIS, ROME), "content": "Checking."}, _answer("call_paris", "a"), _answer("call_paris", "b")],
        "messages[3].tool_call_id",
        ["'call_paris'", "messages[2]"],
        id="one-of-two-calls-answered-twice",
    ),
    pytest.param(
        [USER, _ask(PARIS, ROME), _answer("call_rome", "r"), _answer("call_paris", "p"), _answer("call_rome", "r2")],
        "messages[4].tool_call_id",
        ["'call_rome'", "messages[2]"],
        id="answered-twice-out-of-order",
    ),
]


def _post(module: TrainableModule, messages: list[dict[str, Any]], stream: bool) -> httpx.Response:
    body = {"model": "tiny", "messages": messages, "max_tokens": 2, "stream": stream}
    return httpx.post(module.url + "/chat/completions", json=body, timeout=60)


@pytest.mark.parametrize(("messages", "param", "said"), DUPLICATES)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_tool_call_id_given_twice_is_refused_naming_both_places(
    served_module: TrainableModule,  # noqa: F811
    messages: list[dict[str, Any]],
    param: str,
    said: list[str],
    stream: bool,
) -> None:
    reply = _post(served_module, messages, stream)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert error["type"] == "invalid_request_error" and error["param"] == param, error
    assert error["message"].startswith(param + ": duplicate value "), error
    assert all(s in error["message"] for s in said), error


def test_the_official_client_gets_a_bad_request_error_naming_the_second_answer(
    served_module: TrainableModule,  # noqa: F811
) -> None:
    client = openai.OpenAI(base_url=served_module.url, api_key="unused", max_retries=0, timeout=60)
    messages: Any = [USER, _ask(PARIS), _answer("call_paris", "sunny"), _answer("call_paris", "rainy")]
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="tiny", max_tokens=2, messages=messages)
    body = raised.value.body
    assert isinstance(body, dict) and body["param"] == "messages[3].tool_call_id", body


def test_an_id_reused_by_a_later_round_of_calls_is_served(served_module: TrainableModule) -> None:  # noqa: F811
    # ids are unique per assistant message: a client that numbers each round's calls from 0 is not refused
    first, second = _call("call_0", "Paris"), _call("call_0", "Rome")
    messages = [USER, _ask(first), _answer("call_0", "sunny"), USER, _ask(second), _answer("call_0", "rainy")]
    reply = _post(served_module, messages, False)
    assert reply.status_code == 200, reply.text
