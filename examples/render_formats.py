"""Render the documented examples in every output format.

Run: python examples/render_formats.py          (scripts/demo.sh runs it first)

Each example is shown as the string a local model reads (generic delimiters,
then two real families), then as the request body of every API dialect, one
line each: the bodies differ in a few keys, so a line per dialect lets them be
compared at a glance. ``--indent`` prints each body indented instead.
"""

from __future__ import annotations

import json
import sys

from prompter import AlpacaPrompter, ChatPrompter, ModelFormat, PromptError
from prompter.render import DIALECTS

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]

EXAMPLES = [
    ("Alpaca, two slots", AlpacaPrompter("Answer the question about {topic} using: {context}"),
     {"topic": "cats", "context": "Cats purr when content."}, None),
    ("Alpaca, extra key and tools", AlpacaPrompter("Pick the right tool.", extra_keys="input", tools=TOOLS),
     "What's the weather in Paris?", None),
    ("Chat, history", ChatPrompter("You are a friendly chatbot."),
     "Let's chat.", [["Hello", "Hi! How can I help?"]]),
    ("Chat, tools and a tool round", ChatPrompter("You can call tools.", tools=TOOLS),
     "And in Rome?",
     [
         {"role": "user", "content": "Weather in Paris?"},
         {"role": "assistant", "content": None, "tool_calls": [
             {"id": "call_1", "type": "function",
              "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
         {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp_c\": 18}"},
         {"role": "assistant", "content": "It is 18 °C in Paris."},
     ]),
]


def main(indent: int | None = None) -> None:
    for title, prompter, value, history in EXAMPLES:
        print(f"=== {title} ===")
        print("--- text (no model bound) ---")
        print(prompter.generate_prompt(value, history=history))
        for family in ("qwen2.5", "llama-3.1"):
            print(f"--- text, bound to {family} ---")
            print(prompter.generate_prompt(value, history=history, model_format=ModelFormat.get(family)))
        for dialect in sorted(DIALECTS):
            try:
                body = prompter.generate_prompt(value, history=history, format=dialect)
            except PromptError as error:  # e.g. an API that rejects an empty user turn says so
                print(f"--- {dialect}: (cannot be sent: {error})")
                continue
            text = json.dumps(body, ensure_ascii=False, indent=indent)
            print(f"--- {dialect} ---\n{text}" if indent else f"--- {dialect}: {text}")
        print()


if __name__ == "__main__":
    main(indent=2 if "--indent" in sys.argv[1:] else None)
