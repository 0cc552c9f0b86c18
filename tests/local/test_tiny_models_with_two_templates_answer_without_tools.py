"""A tiny model of a family that ships two chat templates (Hermes 2 Pro, Command R) carries both, as the
real model does: without tools it renders with the default one and answers; with tools, the tool-use one."""

from __future__ import annotations

from pathlib import Path

import pytest

from modules.local.tiny_model import build_tiny_model, build_tiny_tokenizer
from prompter import ModelFormat

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city"}},
                "required": ["city"],
            },
        },
    }
]
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]


@pytest.mark.parametrize("family", ["hermes-2-pro", "command-r-tool-use"])
def test_the_tokenizer_renders_with_the_default_template_without_tools_and_tool_use_with_them(family: str) -> None:
    tok = build_tiny_tokenizer(family)
    fmt = ModelFormat.get(family)
    plain = tok.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
    with_tools = tok.apply_chat_template(MESSAGES, tools=TOOLS, tokenize=False, add_generation_prompt=True)

    assert plain == fmt.render(MESSAGES, add_generation_prompt=True)
    assert with_tools == fmt.render(MESSAGES, tools=TOOLS, add_generation_prompt=True)
    assert "get_weather" in with_tools and "get_weather" not in plain


def test_a_tiny_hermes_model_answers_a_request_without_tools(tmp_path: Path) -> None:
    from modules.local.trainable import TrainableModule

    path = build_tiny_model(tmp_path / "hermes", family="hermes-2-pro")
    module = TrainableModule(path, max_new_tokens=3).start()
    try:
        answer = module.respond("hi")
        assert answer.finish_reason in ("stop", "length")
        assert module.respond("Weather in Paris?", tools=TOOLS).finish_reason in ("stop", "length", "tool_calls")
    finally:
        module.stop()
