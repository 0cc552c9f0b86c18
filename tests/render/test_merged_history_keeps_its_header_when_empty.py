"""AgentScope 0.1.6's ``DashScopeFormatter.format_multi_agent`` writes its history header over the
dialogue even when no message has text (``"## Conversation History\\n"``), and so do 0.0.6a2's DashScope,
ZhipuAI, Gemini and Ollama generation wrappers (``"## Dialogue History\\n"``): the merged turn never drops
the header. 0.0.x's Ollama chat and LiteLLM wrappers, and 0.1.x's other formatters, leave it out. The
outputs below are the real AgentScope's, recorded with 0.1.6 and 0.0.6a2."""

from __future__ import annotations

from typing import Any

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter

CASES: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]] = [
    ("system only", [{"role": "system", "name": "system", "content": "S"}],
     [{"role": "system", "content": [{"text": "S"}]}, {"role": "user", "content": [{"text": "## Conversation History\n"}]}]),
    ("empty turns", [{"role": "system", "name": "system", "content": "S"}, {"role": "assistant", "name": "u", "content": ""},
                     {"role": "assistant", "name": "x_y", "content": ""}],
     [{"role": "system", "content": [{"text": "S"}]}, {"role": "user", "content": [{"text": "## Conversation History\n"}]}]),
    ("no system", [{"role": "user", "name": "u", "content": ""}, {"role": "user", "name": "v", "content": ""}],
     [{"role": "user", "content": [{"text": "## Conversation History\n"}]}]),
]  # fmt: skip


@pytest.mark.parametrize(("said", "upstream"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_merged_dashscope_turn_keeps_the_header_over_an_empty_history(said, upstream):
    body = ChatPrompter(system="").generate_prompt(said, format="dashscope", strategy="multi_agent")
    assert body["input"]["messages"] == upstream
    CHECKS["dashscope"](body)


def test_a_custom_header_is_kept_over_an_empty_history_with_media_before_it(tmp_path):
    image = {"type": "image_url", "image_url": {"url": "https://example.com/park.png"}}
    said = [{"role": "user", "name": "Carol", "content": [{"type": "text", "text": ""}, image]}]
    body = ChatPrompter(system="").generate_prompt(said, format="dashscope", strategy="multi_agent",
                                                   history_header="## Who said what")  # fmt: skip
    assert body["input"]["messages"] == [
        {"role": "user", "content": [{"image": "https://example.com/park.png"}, {"text": "## Who said what\n"}]}
    ]


OLD = {"strategy": "multi_agent", "history_header": "## Dialogue History"}
SYSTEM_ONLY = [{"role": "system", "name": "system", "content": "Be kind."}]
#: AgentScope 0.0.6a2's wrappers on a system Msg alone, as their SDKs send them
LEGACY: list[tuple[str, Any]] = [
    ("dashscope", {"input": {"messages": [{"role": "system", "content": "Be kind."},
                                          {"role": "user", "content": "## Dialogue History\n"}]}}),
    ("zhipu", {"messages": [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "## Dialogue History\n"}]}),
    ("gemini", {"contents": [{"role": "user", "parts": [{"text": "Be kind.\n\n## Dialogue History\n"}]}]}),
    ("ollama_generate", {"prompt": "Be kind.\n\n## Dialogue History\n"}),
    ("ollama", {"messages": [{"role": "system", "content": "Be kind.\n"}]}),
    ("openai", {"messages": [{"role": "user", "content": "Be kind.\n"}]}),  # LiteLLMChatWrapper
]  # fmt: skip


@pytest.mark.parametrize(("dialect", "upstream"), LEGACY, ids=[d for d, _ in LEGACY])
def test_the_dialogue_history_header_over_an_empty_history_is_as_each_0_0_wrapper_writes_it(dialect, upstream):
    assert ChatPrompter(system="").generate_prompt(SYSTEM_ONLY, format=dialect, **OLD) == upstream
