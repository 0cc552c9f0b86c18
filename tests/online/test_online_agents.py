"""Multi-agent conversations through OnlineChatModule: ``strategy``, ``history_header`` and ``as_agent``
per module or per call, each source's native body, sent to a loopback server that rejects what the
real API rejects (roles that do not alternate, an image in an assistant turn, a tool result with no
call before it, a name the API refuses...).

One four-agent conversation -- Alice asks, Bob calls a tool and answers, Carol shows a local image,
Dave a web image -- goes to every source under every strategy, from an observer's and from Bob's
point of view, plain and streamed. Each body must be accepted, keep every speaker's words apart or
named (never silently merged), and carry the local image as base64 in the API's own field.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from wire.anthropic import KEY as ANTHROPIC_KEY
from wire.anthropic import AnthropicServer
from wire.gemini import KEY as GEMINI_KEY
from wire.gemini import GeminiServer
from wire.ollama import MODEL as OLLAMA_MODEL
from wire.ollama import OllamaServer
from wire.openai import KEY as OPENAI_KEY
from wire.openai import OpenAIServer

from modules import OnlineChatModule
from modules.errors import ModuleConfigError
from prompter import ChatPrompter
from prompter.errors import PromptError

PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
TEXTS = {"Alice": "Shall we go out today?", "Bob": "It is 18 degrees in Paris.", "Carol": "Here is the park.",
         "Dave": "And the cafe."}  # fmt: skip
WEATHER = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
#: source name -> (server class, module arguments, where the server's API root is)
SOURCES: dict[str, tuple[type, dict[str, Any]]] = {
    "openai": (OpenAIServer, {"source": "openai", "api_key": OPENAI_KEY, "model": "gpt-test"}),
    "anthropic": (AnthropicServer, {"source": "anthropic", "api_key": ANTHROPIC_KEY, "model": "claude-test"}),
    "gemini": (GeminiServer, {"source": "gemini", "api_key": GEMINI_KEY, "model": "gemini-test"}),
    "ollama": (OllamaServer, {"source": "ollama", "model": OLLAMA_MODEL}),
    "ollama_generate": (OllamaServer, {"source": "ollama", "model": OLLAMA_MODEL, "format": "ollama_generate"}),
}
STRATEGIES = [None, "chat", "multi_agent", "auto"]


@pytest.fixture
def png(tmp_path: Path) -> str:
    """A 1x1 PNG file on disk."""
    path = tmp_path / "park.png"
    path.write_bytes(base64.b64decode(PNG_B64))
    return str(path)


def four_agents(local_image: str, with_url: bool, with_tools: bool) -> list[dict[str, Any]]:
    dave: list[dict[str, Any]] = [{"type": "text", "text": TEXTS["Dave"]}]
    if with_url:
        dave.append({"type": "image_url", "image_url": {"url": "https://example.com/cafe.jpg"}})
    bob: list[dict[str, Any]] = [{"role": "assistant", "name": "Bob", "content": TEXTS["Bob"]}]
    if with_tools:
        call = {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
        bob = [
            {"role": "assistant", "name": "Bob", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 18}'},
            *bob,
        ]
    return [
        {"role": "user", "name": "Alice", "content": TEXTS["Alice"]},
        *bob,
        {"role": "assistant", "name": "Carol", "content": [
            {"type": "text", "text": TEXTS["Carol"]}, {"type": "image_url", "image_url": {"url": local_image}}]},
        {"role": "user", "name": "Dave", "content": dave},
    ]  # fmt: skip


def texts_in(body: Any) -> list[str]:
    if isinstance(body, str):
        return [body]
    if isinstance(body, dict):
        return [t for value in body.values() for t in texts_in(value)]
    if isinstance(body, list):
        return [t for value in body for t in texts_in(value)]
    return []


def assert_no_silent_merge(body: Any) -> None:
    """A text holding two speakers' words names each of them (``name: text``)."""
    for text in texts_in(body):
        held = [name for name, said in TEXTS.items() if said in text]
        if len(held) > 1:
            for name in held:
                assert f"{name}: {TEXTS[name]}" in text, f"{name}'s words merged without their name: {text!r}"


def image_sent_natively(source: str, body: dict[str, Any]) -> bool:
    """The local PNG is in the API's own field for inline images, as base64."""
    dumped = json.dumps(body)
    if source == "openai":
        return f"data:image/png;base64,{PNG_B64}" in dumped
    if source == "anthropic":
        return '"type": "base64"' in dumped and PNG_B64 in dumped
    if source == "gemini":
        return ('"inline_data"' in dumped or '"inlineData"' in dumped) and PNG_B64 in dumped
    if source == "ollama":
        return any(PNG_B64 in m.get("images", []) for m in body["messages"])
    return body.get("images") == [PNG_B64]


def system_sent_natively(source: str, body: dict[str, Any]) -> bool:
    system = "You moderate a group chat."
    if source == "anthropic":
        return system in json.dumps(body.get("system"))
    if source == "gemini":
        return system in json.dumps(body.get("systemInstruction", body.get("system_instruction"))) or system in (
            json.dumps(body["contents"][0])
        )
    if source == "ollama_generate":
        return body["prompt"].startswith(system)
    return body["messages"][0]["role"] == "system" and system in json.dumps(body["messages"][0])


def api_root(source: str, server: Any) -> str:
    return server.api_root if source == "openai" else server.base_url


#: every source x strategy x point of view, given per module and per call, plain and streamed (for the
#: strategies that differ least by where they are given, one (where, stream) pair of each kind)
CASES = [
    pytest.param(source, strategy, as_agent, where, stream,
                 id=f"{source}-{strategy or 'default'}-{as_agent or 'observer'}-{where}-{'stream' if stream else 'plain'}")
    for source in sorted(SOURCES)
    for strategy in STRATEGIES
    for as_agent in (None, "Bob")
    for where in ("module", "call")
    for stream in (False, True)
    if strategy in (None, "multi_agent") or (where == "call") != stream
]  # fmt: skip


def _text(content: Any) -> Any:
    """A message's text: a string, or (under a strategy, as AgentScope 0.1.x) its one text part's."""
    if isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text":
        return content[0]["text"]
    return content


@pytest.mark.parametrize(("source", "strategy", "as_agent", "where", "stream"), CASES)
def test_four_agents_reach_every_source_in_a_body_its_api_accepts(source, strategy, as_agent, where, stream, png):
    server_class, kwargs = SOURCES[source]
    generate = source == "ollama_generate"
    history = four_agents(png, with_url=not source.startswith("ollama"), with_tools=not generate)
    arrangement = {k: v for k, v in {"strategy": strategy, "as_agent": as_agent}.items() if v is not None}
    with server_class() as server:
        module_args = arrangement if where == "module" else {}
        call_args = arrangement if where == "call" else {}
        m = OnlineChatModule(base_url=api_root(source, server), max_retries=0, **kwargs, **module_args)
        m.prompt(ChatPrompter(system="You moderate a group chat."))
        question = {"role": "user", "name": "Alice", "content": "What now?"}
        tools = None if generate else [WEATHER]
        with m:
            if stream:
                pieces = m.stream(question, history=history, tools=tools, **call_args)
                list(pieces)
                answer: Any = pieces.message
            else:
                answer = m(question, history=history, tools=tools, **call_args)
        assert server.rejections == [], [json.loads(r.body) for r in server.rejections]
        assert answer  # the scripted text, or the scripted tool call
        (sent,) = server.received
        body = sent.body
    assert_no_silent_merge(body)
    assert image_sent_natively(source, body), json.dumps(body)[:600]
    assert system_sent_natively(source, body), json.dumps(body)[:600]
    dumped = json.dumps(body)
    if not (source == "ollama" and strategy == "chat"):  # Ollama's chat turns have no name field: kept apart
        for name in ("Alice", "Carol", "Dave"):
            assert name in dumped, f"{name} lost"
    if as_agent == "Bob" and not generate and strategy == "chat" and source in ("openai", "ollama"):
        bob = [msg for msg in body["messages"] if _text(msg.get("content")) == TEXTS["Bob"]]
        assert bob and bob[0]["role"] == "assistant"  # Bob's own turn, from Bob's point of view


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_the_history_header_reaches_the_merged_turn(source, png):
    server_class, kwargs = SOURCES[source]
    history = four_agents(png, with_url=False, with_tools=False)
    with server_class() as server:
        m = OnlineChatModule(
            base_url=api_root(source, server), strategy="multi_agent", history_header="## Dialogue History", **kwargs
        )
        with m:
            m("What now?", history=history)
            per_call = m("What now?", history=history, history_header="## Who said what")
        assert server.rejections == [] and per_call
        first, second = (json.dumps(r.body) for r in server.received)
    assert "## Dialogue History" in first and "## Conversation History" not in first
    assert "## Who said what" in second and "## Dialogue History" not in second


@pytest.mark.parametrize(
    ("argument", "value"),
    [("strategy", "round_robin"), ("strategy", 3), ("history_header", 7), ("as_agent", ""), ("as_agent", ["Bob"])],
)
def test_an_unknown_arrangement_is_a_typed_error_per_module_and_per_call(argument, value):
    with pytest.raises(ModuleConfigError, match=argument):
        OnlineChatModule("ollama", model="m", **{argument: value})
    m = OnlineChatModule("ollama", model="m")
    with pytest.raises(PromptError, match=argument):
        m.build_request("hi", **{argument: value})


def test_the_arrangement_keywords_are_never_sent_as_fields():
    m = OnlineChatModule("ollama", model="m", strategy="multi_agent")
    body = m.build_request("hi", as_agent="Bob", history_header="## H").body
    assert not {"strategy", "as_agent", "history_header"} & set(body)
    assert {"strategy", "as_agent", "history_header"} <= m.known_options()
