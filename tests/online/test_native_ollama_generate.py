"""OnlineChatModule(source="ollama", format="ollama_generate"): Ollama's plain-prompt /api/generate,
against a loopback server that rejects what Ollama rejects (and answers a body with no prompt as
Ollama does: it only loads the model, an empty answer)."""

from __future__ import annotations

import asyncio

import pytest
import requests
from fault_server import FakeClock
from wire.ollama import MODEL, OllamaServer

from modules import OnlineChatModule
from modules.errors import ModuleConfigError
from modules.online.retry import RetryPolicy
from prompter.errors import PromptError

PNG = "data:image/png;base64,iVBORw0KGgo="
WEATHER = {"type": "function", "function": {"name": "w", "parameters": {"type": "object", "properties": {}}}}


@pytest.fixture
def server():
    with OllamaServer() as srv:
        yield srv


def make(server: OllamaServer, **kw) -> OnlineChatModule:
    clock = FakeClock()
    kw.setdefault("retry", RetryPolicy(sleep=clock.sleep, clock=clock.clock, random=lambda: 0.0))
    return OnlineChatModule("ollama", model=MODEL, base_url=server.base_url, format="ollama_generate", **kw)


def test_a_plain_call_sends_one_prompt_and_the_image_as_base64(server):
    m = make(server).prompt("You are terse.")
    question = [{"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                              {"type": "image_url", "image_url": {"url": PNG}}]}]  # fmt: skip
    assert m(question, history=[["hi", "hello"]], max_tokens=20, stop="END") == "Hello from Ollama."
    (sent,) = server.received
    assert sent.path == "/api/generate" and server.rejections == []
    assert sent.body["stream"] is False and "messages" not in sent.body
    prompt = sent.body["prompt"]
    assert prompt.index("You are terse.") < prompt.index("## Conversation History")
    assert "user: hi\nassistant: hello\nuser: What is this?" in prompt
    assert sent.body["images"] == ["iVBORw0KGgo="]
    assert sent.body["options"] == {"num_predict": 20, "stop": ["END"]}


def test_the_whole_response_has_the_finish_reason_usage_and_model(server):
    response = make(server).respond("hi")
    assert response.text == "Hello from Ollama." and response.finish_reason == "stop"
    assert response.usage["prompt_tokens"] == 9 and response.usage["completion_tokens"] == 5
    assert response.model == MODEL and response.raw["context"] == [1, 2, 3]


def test_a_stream_is_read_line_by_line_and_ends_with_the_whole_response(server):
    stream = make(server).stream("hi")
    assert "".join(stream) == "Hello from Ollama."
    assert server.received[0].body["stream"] is True
    assert stream.response is not None and stream.response.finish_reason == "stop"
    assert stream.response.usage["completion_tokens"] == 5


def test_astream_and_acall_use_the_same_endpoint(server):
    m = make(server)

    async def main() -> tuple[object, str]:
        return await m.acall("hi"), "".join([piece async for piece in m.astream("hi")])

    assert asyncio.run(main()) == ("Hello from Ollama.", "Hello from Ollama.")
    assert [r.path for r in server.received] == ["/api/generate"] * 2


def test_raw_sends_the_prompt_untemplated(server):
    m = make(server)
    assert m("<|user|>hi<|assistant|>", raw=True, keep_alive="1m") == "Hello from Ollama."
    body = server.received[0].body
    assert body["raw"] is True and body["keep_alive"] == "1m"
    assert body["prompt"].endswith("<|user|>hi<|assistant|>")


def test_raw_with_a_system_field_is_refused_before_sending_as_ollama_would_refuse_it(server):
    with pytest.raises(ModuleConfigError, match="raw"):
        make(server)("hi", raw=True, system="Be brief.")
    assert server.received == []


def test_the_wire_server_refuses_raw_with_a_system_as_ollama_does(server):
    """The loopback server can fail: what the module refuses locally, Ollama refuses with a 400."""
    body = {"model": MODEL, "prompt": "hi", "raw": True, "system": "x", "stream": False}
    answer = requests.post(server.base_url + "/api/generate", json=body, timeout=5)
    assert answer.status_code == 400 and "raw mode" in answer.json()["error"]


def test_a_chat_body_sent_to_generate_gets_nothing_back_from_ollama(server):
    """Why the module must send ``prompt``: Ollama ignores ``messages`` there and only loads the model."""
    body = dict(OnlineChatModule("ollama", model=MODEL, base_url=server.base_url).build_request("hi").body)
    answer = requests.post(server.base_url + "/api/generate", json=body, timeout=5).json()
    assert answer["response"] == "" and answer["done_reason"] == "load"


def test_tools_are_refused_with_the_remedy(server):
    with pytest.raises(PromptError, match="format='ollama'"):
        make(server)("hi", tools=[WEATHER])
    assert server.received == []


def test_an_image_url_is_refused_with_the_remedy(server):
    question = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/a.png"}}]}]
    with pytest.raises(PromptError, match="base64"):
        make(server)(question)


@pytest.mark.parametrize(
    ("source", "fmt"),
    [("ollama", "anthropic"), ("ollama", "openai"), ("openai", "ollama_generate"), ("anthropic", "gemini"),
     ("ollama", "nope"), ("ollama", 3)],
)  # fmt: skip
def test_a_format_the_source_cannot_send_is_a_typed_error_naming_the_choices(source, fmt):
    with pytest.raises(ModuleConfigError, match="format"):
        OnlineChatModule(source, model="m", base_url="http://127.0.0.1:1", api_key="k", format=fmt)


def test_each_source_accepts_its_own_format_by_name():
    for source, fmt in [("ollama", "ollama"), ("anthropic", "anthropic"), ("gemini", "gemini"), ("openai", "openai")]:
        OnlineChatModule(source, model="m", base_url="http://127.0.0.1:1", api_key="k", format=fmt)


def test_generate_call_keywords_are_known_and_chat_ones_are_not_offered_there(server):
    m = make(server)
    assert {"raw", "suffix", "system", "template", "context", "images"} - {"images"} <= m.known_options()
    chat = OnlineChatModule("ollama", model=MODEL, base_url=server.base_url)
    with pytest.raises(ModuleConfigError, match="raw"):
        chat("hi", raw=True)


def test_a_429_with_retry_after_is_retried_once_and_a_400_and_401_are_typed():
    from wire.common import json_answer

    from modules.errors import AuthenticationError, BadRequestError

    clock = FakeClock()
    with OllamaServer(key="ollama-key-0123456789abcdef") as srv:
        srv.script.append(json_answer({"error": "too many requests"}, 429, {"Retry-After": "1"}))
        m = make(srv, api_key="ollama-key-0123456789abcdef",
                 retry=RetryPolicy(sleep=clock.sleep, clock=clock.clock, random=lambda: 0.0))  # fmt: skip
        assert m("hi") == "Hello from Ollama." and clock.sleeps == [1.0] and len(srv.received) == 2
        with pytest.raises(AuthenticationError):
            make(srv, api_key="wrong-key-0123456789", max_retries=0)("hi")
        with pytest.raises(BadRequestError, match="raw mode"):  # Ollama's own 400, here for a template in raw mode
            srv.script.append(json_answer({"error": "raw mode does not support template, system, or context"}, 400))
            m("hi")


def test_a_cut_stream_keeps_its_partial_text(server):
    from wire.common import Answer, split_every

    from modules.errors import StreamInterruptedError

    lines = b"".join(b'{"model": "%s", "response": "%s", "done": false}\n' % (MODEL.encode(), p) for p in (b"Hel", b"lo"))
    server.script.append(Answer(200, {"Content-Type": "application/x-ndjson"}, chunks=split_every(lines, 7), cut=True))
    with pytest.raises(StreamInterruptedError) as info:
        list(make(server, max_retries=0).stream("hi"))
    assert info.value.partial_text == "Hello"
