"""Gemini 3's thought signatures go back with the function calls they came with, through ``history``.

Gemini 3 models put a ``thoughtSignature`` on each ``functionCall`` part and refuse (400) a request
whose history holds one of their calls without it. The call came back in OpenAI's shape without the
signature, so the documented round trip (append ``response.message`` and the tool's result to
``history``, call again) failed. The signature now rides in the call's
``extra_content.google.thought_signature`` (the convention of Gemini's OpenAI-compatible API) and
the gemini dialect writes it back beside the ``functionCall``. The loopback server acts as a
Gemini 3 model: it signs its calls and refuses a history call without its signature.
"""

from __future__ import annotations

import copy

from wire.gemini import KEY, GeminiServer

from modules import OnlineChatModule
from prompter import ChatPrompter

WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
}


def test_the_tool_call_round_trip_keeps_each_calls_signature() -> None:
    with GeminiServer() as server:
        server.signatures = True
        server.parallel = 2
        module = OnlineChatModule("gemini", model="gemini-3-test", base_url=server.base_url, api_key=KEY)
        first = module.respond("Weather in Paris?", tools=[WEATHER])
        assert [c["extra_content"] for c in first.tool_calls] == [
            {"google": {"thought_signature": "sig-0"}},
            {"google": {"thought_signature": "sig-1"}},
        ]
        history = [
            {"role": "user", "content": "Weather in Paris?"},
            first.message,
            *({"role": "tool", "tool_call_id": c["id"], "content": '{"temp": 18}'} for c in first.tool_calls),
        ]
        before = copy.deepcopy(history)
        second = module.respond("And now?", history=history, tools=[WEATHER])  # refused without the signatures
        assert second.tool_calls or second.text
        assert history == before  # nothing the caller passed is changed
        sent = server.received[-1].body
        calls = [p for c in sent["contents"] for p in c["parts"] if "functionCall" in p]
        assert [p["thoughtSignature"] for p in calls] == ["sig-0", "sig-1"]


def test_a_streamed_calls_signature_comes_back_too() -> None:
    with GeminiServer() as server:
        server.signatures = True
        module = OnlineChatModule("gemini", model="gemini-3-test", base_url=server.base_url, api_key=KEY)
        stream = module.stream("Weather?", tools=[WEATHER])
        list(stream)
        assert stream.response is not None
        (call,) = stream.response.tool_calls
        assert call["extra_content"] == {"google": {"thought_signature": "sig-0"}}


def test_the_gemini_dialect_writes_a_signature_given_in_openai_shape_and_only_there() -> None:
    call = {
        "id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
        "extra_content": {"google": {"thought_signature": "opaque=="}},
    }  # fmt: skip
    history = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    p = ChatPrompter("You help.")
    gemini = p.generate_prompt("thanks", history=history, tools=[WEATHER], format="gemini")
    (part,) = [x for c in gemini["contents"] for x in c["parts"] if "functionCall" in x]
    assert part == {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}, "thoughtSignature": "opaque=="}
    anthropic = p.generate_prompt("thanks", history=history, tools=[WEATHER], format="anthropic")
    assert "opaque==" not in repr(anthropic)  # another provider's signature is not sent to Anthropic


def _signed_call() -> dict[str, object]:
    return {
        "id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
        "extra_content": {"google": {"thought_signature": "sig=="}},
    }  # fmt: skip


def test_gemini_openai_compatible_signatures_survive_the_round_trip_too() -> None:
    import json

    from fault_server import FaultServer, Reply, Stream

    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [_signed_call()]},
                         "finish_reason": "tool_calls"}]}  # fmt: skip
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, **_signed_call()}]}, "finish_reason": None}]}
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    events = [f"data: {json.dumps(c)}\n\n".encode() for c in (chunk, end)] + [b"data: [DONE]\n\n"]
    with FaultServer() as server:
        server.script.extend([Reply(200, body), Stream(events)])
        module = OnlineChatModule(source="openai", model="gemini-3-test", base_url=server.base_url, api_key="k" * 20)
        first = module.respond("Weather?", tools=[WEATHER])
        streamed = module.stream("Weather?", tools=[WEATHER])
        list(streamed)
        assert streamed.response is not None
        for response in (first, streamed.response):
            (call,) = response.tool_calls
            assert call["extra_content"] == {"google": {"thought_signature": "sig=="}}
        history = [{"role": "user", "content": "Weather?"}, first.message,
                   {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]  # fmt: skip
        module.respond("Thanks", history=history, tools=[WEATHER])
        sent = json.loads(server.requests[-1].body)
        (assistant,) = [m for m in sent["messages"] if m["role"] == "assistant"]
        assert assistant["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "sig=="}}


def test_only_the_openai_dialect_writes_extra_content_back() -> None:
    history = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [_signed_call()]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    p = ChatPrompter("You help.")
    body = p.generate_prompt("thanks", history=history, tools=[WEATHER], return_dict=True)
    assert body["messages"][2]["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "sig=="}}
    for fmt in ("dashscope", "zhipu", "ollama"):
        assert "sig==" not in repr(p.generate_prompt("thanks", history=history, tools=[WEATHER], format=fmt))
