"""The README's main job, end to end, offline: ``python -m modules.demo`` (or ``prompter demo``).

It tells a four-step story, a few lines per step:

1. Build (once, into a cache folder) a tiny local chat model: random weights,
   a real byte-level tokenizer and Qwen 2.5's real chat template.
2. Write one ChatPrompter.
3. Run it through ``TrainableModule``: the prompter renders the model's exact
   chat-template string.
4. Serve the same model over an OpenAI-compatible API on 127.0.0.1 and call it
   through ``OnlineChatModule``, the module you would point at OpenAI,
   DeepSeek or Qwen.

Both answers are the same text: the same conversation and greedy generation,
once in process and once over HTTP. The weights are random, so the text is
gibberish; swap the path for a real model folder and nothing else changes.
"""

from __future__ import annotations

import json
import time
from typing import TextIO

from modules.errors import DOCS_URL

__all__ = ["main"]

_INSTRUCTION = "You answer questions about {topic} in one sentence."


def main(out: TextIO | None = None) -> int:
    """Run the demo, telling each step in a few lines; returns 0 on success."""
    import sys

    stream = out or sys.stdout

    def say(text: str = "") -> None:
        print(text, file=stream, flush=True)

    from transformers.utils import logging

    logging.disable_progress_bar()
    logging.set_verbosity_error()

    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule
    from modules.online.module import OnlineChatModule
    from prompter import ChatPrompter

    t0 = time.perf_counter()
    say("prompter demo: one prompter, a local model, and the same model behind an OpenAI-compatible API.")
    say("The model is tiny and its weights are RANDOM, so its answers are gibberish by design;")
    say("point the path at a real model folder and nothing else changes.\n")

    say("1. Build a tiny Qwen 2.5-style model (real tokenizer and chat template, random weights)")
    path = cached_tiny_model("qwen2.5")
    took = time.perf_counter() - t0
    say(f"   ready: {path}  ({f'built in {took:.1f}s' if took > 0.5 else 'built earlier, reused'})\n")

    say("2. Write one prompter")
    # An explicit system prompt: without one, the local model would get its own default
    # ("You are Qwen, ...") and an online API prompter's default, and the answers would differ.
    prompter = ChatPrompter(_INSTRUCTION, system="You are terse.")
    question = {"topic": "cats", "input": "Why do cats purr?"}
    say(f'   ChatPrompter("{_INSTRUCTION}", system="You are terse.")')
    say(f"   input: {json.dumps(question)}")

    say("   (loading the model and starting its server: a few seconds)\n")
    local = TrainableModule(path, max_new_tokens=12).prompt(prompter).start(serve=True)
    try:
        request = local.build_request(question)
        say("3. Run it in process: the prompter renders the model's own chat template, byte for byte:")
        say(request.text.rstrip("\n"))
        answer_local = local(question)
        say(f"   {len(request.input_ids)} tokens in; answer (random weights): {answer_local!r}\n")

        say("4. Serve it and call it like any online API, through OnlineChatModule")
        online = OnlineChatModule(source="openai-compatible", base_url=local.url, model=local.name, api_key="demo")
        online.prompt(prompter)
        body = {"model": local.name, **prompter.generate_prompt(question, format="openai"), "max_tokens": 12}
        say(f"   POST {local.url}/chat/completions")
        say(f"   {json.dumps(body, ensure_ascii=False)}")
        answer_http = online(question, max_tokens=12)
        say(f"   answer over HTTP: {answer_http!r}  (same as in-process: {answer_http == answer_local})")
        pieces = list(online.stream(question, max_tokens=12))
        say(f"   streamed in {len(pieces)} pieces: {'|'.join(pieces)}")
    finally:
        local.stop()
    say(f"\ndone in {time.perf_counter() - t0:.1f}s. Next: {DOCS_URL}/getting-started.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
