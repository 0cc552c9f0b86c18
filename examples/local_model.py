"""A local model, three ways: in process, over HTTP with the openai client, and through OnlineChatModule.

Runs offline in a few seconds: the model is the tiny one the project builds
(random weights, a real tokenizer and Qwen 2.5's chat template). Point
``TrainableModule`` at a real model folder and nothing else changes.

The openai-client leg needs the official client, which no extra installs
(``pip install openai``); without it that leg is skipped, with a note saying so.
"""

from __future__ import annotations

try:
    import openai
except ModuleNotFoundError:  # not a dependency of prompter-kit
    openai = None

from prompter import ChatPrompter
from prompter.modules import OnlineChatModule, TrainableModule, cached_tiny_model

prompter = ChatPrompter("You answer questions about {topic}.", system="You are terse.")
question = {"topic": "cats", "input": "Why do cats purr?"}

local = TrainableModule(cached_tiny_model(), name="tiny", max_new_tokens=8).prompt(prompter)
local.start(serve=True)
try:
    in_process = local(question)

    online = OnlineChatModule(base_url=local.url, model="tiny", api_key="unused").prompt(prompter)
    over_http = online(question, max_tokens=8)
    print("in process:   ", repr(in_process))
    print("OnlineChat:   ", repr(over_http))
    if in_process != over_http:
        raise SystemExit("in process and over HTTP disagree")

    if openai is None:
        print("openai client: skipped (pip install openai to try the official client too)")
    else:
        client = openai.OpenAI(base_url=local.url, api_key="unused", max_retries=0)
        body = prompter.generate_prompt(question, format="openai")
        reply = client.chat.completions.create(model="tiny", **body, max_tokens=8)
        print("openai client:", repr(reply.choices[0].message.content))
        if reply.choices[0].message.content != in_process:
            raise SystemExit("the openai client's answer disagrees")
finally:
    local.stop()
