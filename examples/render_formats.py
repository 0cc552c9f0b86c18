"""Render the documented examples in every output format.

Run: python examples/render_formats.py
"""

from __future__ import annotations

import json

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


def main() -> None:
    for title, prompter, value, history in EXAMPLES:
        print(f"=== {title} ===")
        print("--- text (no model bound) ---")
        print(prompter.generate_prompt(value, history=history))
        for family in ("qwen2.5", "llama-3.1"):
            print(f"--- text, bound to {family} ---")
            print(prompter.generate_prompt(value, history=history, model_format=ModelFormat.get(family)))
        for dialect in sorted(DIALECTS):
            print(f"--- {dialect} ---")
            try:
                body = prompter.generate_prompt(value, history=history, format=dialect)
            except PromptError as error:  # e.g. an API that rejects an empty user turn says so
                print(f"(cannot be sent: {error})")
                continue
            print(json.dumps(body, ensure_ascii=False, indent=2))
        print()


if __name__ == "__main__":
    main()
