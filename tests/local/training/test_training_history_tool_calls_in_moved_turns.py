"""``train_on_history`` learns a history tool call also where the template writes the conversation
differently once more turns follow.

Before the fix, the call's turn was located only by two agreements (the prompt for the turn
is where the conversation begins; the conversation through the turn agrees with the prompt
up to its end). Qwen3 writes an empty think block before the last answer only, and Mistral's
tool templates move ``[AVAILABLE_TOOLS]`` before the last user turn, so the agreements
failed; a call has no text to trace, so the call the template plainly writes in the prompt
was silently not learnt (only a log line), against the promise that "a tool call in the
history is learnt as the template writes it".
"""

from __future__ import annotations

import logging

import pytest

from modules.local.training.example import IGNORE_INDEX
from prompter import ChatPrompter

TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}  # fmt: skip
CALL = {"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Lima"}'}}
HISTORY = [
    {"role": "user", "content": "Weather in Lima?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call12345", "content": "sunny"},
    {"role": "assistant", "content": "Sunny."},
]

# family -> (the call as the template writes it in the prompt, through the stop token; the end of turn)
WRITTEN = {
    "qwen3": ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lima"}}\n</tool_call><|im_end|>', "<|im_end|>"),
    "mistral-v0.3-tools": (
        ' [TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Lima"}, "id": "call12345"}] </s>',
        " </s>",
    ),
    "mistral-nemo": ('[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Lima"}, "id": "call12345"}]</s>', "</s>"),
}


def learnt_segments(family: str) -> tuple[list[str], str]:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    m = TrainableModule(cached_tiny_model(family)).prompt(ChatPrompter("Answer briefly.", enable_system=False))
    example = m.training_example("And in Oslo?", HISTORY, [TOOL], label="Rainy.", train_on_history=True)
    prompt = m.build_request("And in Oslo?", HISTORY, [TOOL]).text
    segments: list[list[int]] = [[]]
    for tid, label in zip(example["input_ids"], example["labels"]):
        if label != IGNORE_INDEX:
            segments[-1].append(tid)
        elif segments[-1]:
            segments.append([])
    decode = m.tokenizer.decode
    return [decode(s, skip_special_tokens=False, clean_up_tokenization_spaces=False) for s in segments if s], prompt


@pytest.mark.parametrize("family", sorted(WRITTEN), ids=str)
def test_a_history_tool_call_is_learnt_where_the_template_moves_turns(
    family: str, caplog: pytest.LogCaptureFixture
) -> None:
    call, end = WRITTEN[family]
    with caplog.at_level(logging.WARNING, logger="modules.local.training.example"):
        segments, prompt = learnt_segments(family)
    assert call in prompt  # the template does write the call in the inference prompt
    assert "cannot locate history answer" not in caplog.text
    assert len(segments) == 3, segments
    assert segments[0] == call  # the call, through its stop token
    assert segments[1].strip() == f"Sunny.{end}".strip()
    assert segments[2].endswith(f"Rainy.{end}")
