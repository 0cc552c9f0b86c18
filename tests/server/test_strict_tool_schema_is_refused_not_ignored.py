"""``tools[].function.strict: true`` is refused by name: the server cannot keep OpenAI's promise behind it.

With ``strict: true`` OpenAI guarantees a tool call's arguments match the function's ``parameters``
schema. The server accepted the key and ignored it, so a client was handed arguments nothing had checked
as if they had been. It now answers 400 naming ``tools[i].function.strict`` and the remedy; ``false``
and ``null`` (OpenAI's default) are served as before, and so is a request that offers no tools
(``tool_choice: "none"``), whose answer holds no call to check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from modules.base import Completion, StreamDelta
from modules.server.app import ServerThread, create_app

USER: Any = [{"role": "user", "content": "Weather in Paris?"}]


def _tool(name: str, **function: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    return {"type": "function", "function": {"name": name, "parameters": schema, **function}}


class _Plain:
    name = "scripted"

    def prepare(self, messages: Any, tools: Any = None, **generation: Any) -> Any:
        return tools

    def prepare_text(self, prompt: str, **generation: Any) -> Any:
        return None

    def generate(self, request: Any, cancel: Any = None) -> Completion:
        return Completion(text="ok", finish_reason="stop", usage={})

    def generate_stream(self, request: Any, cancel: Any = None) -> Iterator[StreamDelta]:
        yield StreamDelta(text="ok", finish_reason="stop")


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    server = ServerThread(create_app(_Plain())).start()
    yield server
    server.stop()


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("index", [0, 1], ids=["first-tool", "second-tool"])
def test_strict_true_is_a_400_naming_the_tool_and_the_remedy(server: ServerThread, index: int, stream: bool) -> None:
    tools = [_tool("get_weather"), _tool("get_time")]
    tools[index] = _tool(tools[index]["function"]["name"], strict=True)
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="scripted", messages=USER, tools=tools, stream=stream)
    error = caught.value.body
    assert isinstance(error, dict)
    assert error["param"] == f"tools[{index}].function.strict"
    assert error["type"] == "invalid_request_error"
    assert "not supported" in error["message"] and "leave strict out or send false" in error["message"]


@pytest.mark.parametrize("value", ["true", 1, {}, []], ids=["string", "number", "object", "array"])
def test_strict_of_another_type_is_a_400_naming_it(server: ServerThread, value: Any) -> None:
    body = {"model": "scripted", "messages": USER, "tools": [_tool("get_weather", strict=value)]}
    reply = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=30)
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "tools[0].function.strict"
    assert "expected a boolean" in reply.json()["error"]["message"]


@pytest.mark.parametrize(
    ("function", "choice"),
    [({"strict": False}, None), ({"strict": None}, None), ({}, None), ({"strict": True}, "none")],
    ids=["false", "null", "absent", "true-but-no-tools-offered"],
)
def test_strict_that_promises_nothing_is_served(server: ServerThread, function: dict[str, Any], choice: Any) -> None:
    body: dict[str, Any] = {"model": "scripted", "messages": USER, "tools": [_tool("get_weather", **function)]}
    if choice is not None:
        body["tool_choice"] = choice
    reply = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=30)
    assert reply.status_code == 200, reply.text
    assert reply.json()["choices"][0]["message"]["content"] == "ok"
