"""``train_on_history`` with a tool call in the history: learnt where the template writes the call,
never learnt as an empty answer where the template drops it.

Before the fix, a template that does not render ``tool_calls`` (ChatML, Llama 3, Phi-3...)
left an empty assistant turn (``<|im_start|>assistant\\n<|im_end|>``) where the call was,
and that turn was learnt: the model was taught to answer the user's question with nothing
but an end-of-turn token.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from modules.local.training.example import IGNORE_INDEX
from prompter import ChatPrompter

TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}  # fmt: skip
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Lima"}'}}
HISTORY = [
    {"role": "user", "content": "Weather in Lima?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    {"role": "assistant", "content": "Sunny."},
]


def learnt_segments(family: str) -> list[str]:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    m = TrainableModule(cached_tiny_model(family)).prompt(ChatPrompter("Answer briefly.", enable_system=False))
    example = m.training_example("And in Oslo?", HISTORY, [TOOL], label="Rainy.", train_on_history=True)
    segments: list[list[int]] = [[]]
    for tid, label in zip(example["input_ids"], example["labels"]):
        if label != IGNORE_INDEX:
            segments[-1].append(tid)
        elif segments[-1]:
            segments.append([])
    decode = m.tokenizer.decode
    return [decode(s, skip_special_tokens=False, clean_up_tokenization_spaces=False) for s in segments if s]


@pytest.mark.parametrize(
    ("family", "end"), [("chatml", "<|im_end|>"), ("llama-3", "<|eot_id|>"), ("phi-3", "<|end|>")], ids=str
)
def test_a_tool_call_the_template_drops_is_not_learnt_as_an_empty_answer(
    family: str, end: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="modules.local.training.example"):
        assert learnt_segments(family) == [f"Sunny.{end}", f"Rainy.{end}"]
    assert "cannot locate history answer" in caplog.text


def test_a_tool_call_the_template_writes_is_learnt() -> None:
    segments: Any = learnt_segments("qwen2.5")
    assert segments == [
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lima"}}\n</tool_call><|im_end|>',
        "Sunny.<|im_end|>",
        "Rainy.<|im_end|>",
    ]
