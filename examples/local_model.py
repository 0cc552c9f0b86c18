"""A local model, three ways: in process, over HTTP with the openai client, and through OnlineChatModule.

Runs offline in a few seconds: the model is the tiny one the project builds
(random weights, a real tokenizer and Qwen 2.5's chat template). Point
``TrainableModule`` at a real model folder and nothing else changes.
"""

from __future__ import annotations

import openai

from modules import OnlineChatModule, TrainableModule
from modules.local.tiny_model import cached_tiny_model
from prompter import ChatPrompter

prompter = ChatPrompter("You answer questions about {topic}.", system="You are terse.")
question = {"topic": "cats", "input": "Why do cats purr?"}

local = TrainableModule(cached_tiny_model(), name="tiny", max_new_tokens=8).prompt(prompter)
local.start(serve=True)
try:
    in_process = local(question)

    client = openai.OpenAI(base_url=local.url, api_key="unused", max_retries=0)
    body = prompter.generate_prompt(question, format="openai")
    reply = client.chat.completions.create(model="tiny", **body, max_tokens=8)

    online = OnlineChatModule(base_url=local.url, model="tiny", api_key="unused").prompt(prompter)
    over_http = online(question, max_tokens=8)

    print("in process:   ", repr(in_process))
    print("openai client:", repr(reply.choices[0].message.content))
    print("OnlineChat:   ", repr(over_http))
    if not in_process == reply.choices[0].message.content == over_http:
        raise SystemExit("the three paths disagree")
finally:
    local.stop()
