"""Prompters on an online chat module: Alpaca and Chat prompters, streaming, tool calls, providers.

Runs offline: a FakeOpenAIServer on 127.0.0.1 stands in for the provider's
API (real HTTP, real server-sent events), answering from a script. To talk to
a real provider, drop the server and ``base_url=`` and set the key, e.g.
``OnlineChatModule(source="deepseek")`` with ``DEEPSEEK_API_KEY`` set.

Run: python examples/online_chat.py
"""

from __future__ import annotations

import json

from prompter import AlpacaPrompter, ChatPrompter
from prompter.modules import OnlineChatModule, testing
from prompter.modules.online.sources import SOURCES

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}

SCRIPT = [
    "Bonjour, comment allez-vous ?",
    "Cats purr when they are content, and also to soothe themselves.",
    "Once upon a time, a small cat found a warm sunbeam and stayed there all afternoon.",
    {"content": None, "tool_calls": [testing.tool_call("get_weather", {"city": "Paris"})]},
    "It is 18°C and sunny in Paris.",
    "Hello from a second provider.",
]


def main() -> None:
    with testing.FakeOpenAIServer(replies=SCRIPT) as server:
        base = OnlineChatModule(base_url=server.base_url, model="fake-model", api_key="sk-example-key-0000abcd")
        print("module:", base)  # the key is masked

        # 1. An Alpaca prompter: a single-turn instruction with a slot.
        translate = base.share(prompt=AlpacaPrompter("Translate {input} into French."))
        print("\n[alpaca]", translate("Hello, how are you?", temperature=0))
        print("  sent:", json.dumps(server.requests[-1].json(), ensure_ascii=False)[:160], "...")

        # 2. A chat prompter with a slot, a history and an extra generation option.
        cats = base.share(prompt=ChatPrompter("You answer questions about {topic}."))
        history = [["Hi!", "Hello! Ask me about cats."]]
        print("\n[chat]", cats({"topic": "cats", "input": "Why do cats purr?"}, history=history, max_tokens=50))
        print("  roles sent:", [m["role"] for m in server.requests[-1].json()["messages"]])

        # 3. Streaming: pieces arrive as the model writes them.
        print("\n[stream] ", end="")
        with base.stream("Tell me a very short story.") as stream:
            for piece in stream:
                print(piece, end="", flush=True)
        print(f"\n  finish_reason={stream.finish_reason!r}, {len(stream.text)} characters")

        # 4. Tool calls: the module returns the assistant message; run the tool, send the result back.
        agent = base.share(prompt="You can check the weather.")
        question = "What's the weather in Paris?"
        reply = agent(question, tools=[WEATHER])
        if isinstance(reply, str):  # the model answered directly instead of calling the tool
            raise SystemExit(f"expected a tool call, got: {reply}")
        call = reply["tool_calls"][0]
        args = json.loads(call["function"]["arguments"])
        print("\n[tools] the model called", call["function"]["name"], args)
        result = {"role": "tool", "tool_call_id": call["id"], "content": json.dumps({"temp_c": 18, "sky": "sunny"})}
        history = [{"role": "user", "content": question}, reply, result]
        print("  final answer:", agent("Answer the question.", history=history, tools=[WEATHER]))

        # 5. Switching providers: same code, another row of the sources table.
        other = OnlineChatModule(source="kimi", base_url=server.base_url, api_key="sk-example-kimi-0000wxyz")
        print("\n[providers]", other.source, other.model, "->", other("hi"))
        for name, src in SOURCES.items():
            print(f"  {name:18} {src.base_url or '(your base_url)':52} {src.default_model or '(your model)'}")
        base.close()


if __name__ == "__main__":
    main()
