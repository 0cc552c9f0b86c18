"""A tool-call answer whose text mentions the tool's name is still refused where the template drops the call.

Before the fix, whether the template wrote the call was judged by the tool's name appearing in
the rendered answer; an answer such as ``"Let me use get_weather."`` beside its call made a
template that drops tool calls (ChatML, Llama 3) look as if it wrote it, so the call was
silently left out and only the text was learnt, against the promise that such a template is a
``TrainingExampleError`` rather than a call lost.
"""

from __future__ import annotations

from typing import Any

import pytest

from modules.local.training.example import IGNORE_INDEX, TrainingExampleError
from prompter import ChatPrompter

CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Lima"}'}}
ANSWER = {"role": "assistant", "content": "Let me use get_weather.", "tool_calls": [CALL]}


def module(family: str) -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model(family)).prompt(ChatPrompter(None, enable_system=False))


@pytest.mark.parametrize("family", ["chatml", "llama-3", "gemma-2"])
def test_a_dropped_call_is_refused_even_when_the_text_names_the_tool(family: str) -> None:
    m = module(family)
    with pytest.raises(TrainingExampleError, match="does not write the answer's tool_calls"):
        m.training_example("Weather in Lima?", label=ANSWER)


def test_a_written_call_beside_text_naming_the_tool_is_learnt() -> None:
    m = module("qwen2.5")
    example = m.training_example("Weather in Lima?", label=ANSWER)
    learnt = [t for t, label in zip(example["input_ids"], example["labels"]) if label != IGNORE_INDEX]
    text = m.tokenizer.decode(learnt, skip_special_tokens=False)
    assert text == (
        'Let me use get_weather.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lima"}}\n'
        "</tool_call><|im_end|>"
    )
