"""The README's main job, end to end, offline: ``python -m modules.demo`` (or ``prompter demo``).

1. Build (once, into a cache folder) a tiny local chat model: random weights,
   a real byte-level tokenizer and Qwen 2.5's real chat template.
2. Write one ChatPrompter and run it through ``TrainableModule``: the prompter
   renders the model's exact chat-template string; we print it.
3. Serve the same model over an OpenAI-compatible API on 127.0.0.1 and call it
   through ``OnlineChatModule``, the module you would point at OpenAI,
   DeepSeek or Qwen; we print the OpenAI body it sends.

Both answers are the same text: the same conversation and greedy generation,
once in process and once over HTTP. The model's weights are random, so the text is gibberish;
swap the path for a real model folder and nothing else changes.
"""

from __future__ import annotations

import json
import time

__all__ = ["main"]


def main() -> int:
    """Run the demo, printing each step; returns 0 on success."""
    from transformers.utils import logging

    logging.disable_progress_bar()
    logging.set_verbosity_error()

    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule
    from modules.online.module import OnlineChatModule
    from prompter import ChatPrompter

    t0 = time.perf_counter()
    path = cached_tiny_model("qwen2.5")
    print(f"1. tiny qwen2.5-family model: {path}  ({time.perf_counter() - t0:.1f}s)")

    # An explicit system prompt: without one, the local model would get its own default
    # ("You are Qwen, ...") and an online API prompter's default, and the answers would differ.
    prompter = ChatPrompter("You answer questions about {topic} in one sentence.", system="You are terse.")
    question = {"topic": "cats", "input": "Why do cats purr?"}

    local = TrainableModule(path, max_new_tokens=12).prompt(prompter).start(serve=True)
    try:
        request = local.build_request(question)
        print("\n2. the string the local model reads (its own chat template, rendered by the prompter):")
        print(request.text)
        print(f"   {len(request.input_ids)} tokens; user text spans: {list(request.spans)}")
        answer_local = local(question)
        print(f"   in-process answer: {answer_local!r}")

        online = OnlineChatModule(source="openai-compatible", base_url=local.url, model=local.name, api_key="demo")
        online.prompt(prompter)
        body = prompter.generate_prompt(question, format="openai")
        print(f"\n3. served at {local.url}; the OpenAI body OnlineChatModule sends:")
        print(json.dumps({"model": local.name, **body, "max_tokens": 12}, indent=2, ensure_ascii=False))
        answer_http = online(question, max_tokens=12)
        print(f"   answer over HTTP: {answer_http!r}  (same as in-process: {answer_http == answer_local})")
        print("   streamed: ", end="")
        for piece in online.stream(question, max_tokens=12):
            print(piece, end="|", flush=True)
        print()
    finally:
        local.stop()
    print(f"\ndone in {time.perf_counter() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
