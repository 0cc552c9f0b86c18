"""``train_on_history`` learns a history answer's closing stop token even where the template closes
a turn only when another one follows.

Qwen1.5's template writes ``<|im_end|>`` after every turn but the last. A history answer is
located by rendering the conversation through it (then it is the last turn, unclosed), so
before the fix its region ended at the answer's text: the history learnt ``a1`` while the
final answer learnt ``a3<|im_end|>``, and the model was never taught to stop after a
history turn, although the prompt holds the very token it must emit there.
"""

from __future__ import annotations

from typing import Any

import pytest

from modules.local.training.example import IGNORE_INDEX
from prompter import ChatPrompter


def learnt_segments(family: str, **kwargs: Any) -> list[str]:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    m = TrainableModule(cached_tiny_model(family)).prompt(ChatPrompter("Answer briefly.", enable_system=False))
    example = m.training_example("q3", [["q1", "a1"], ["q2", "a2"]], label="a3", train_on_history=True, **kwargs)
    segments: list[list[int]] = [[]]
    for tid, label in zip(example["input_ids"], example["labels"]):
        if label != IGNORE_INDEX:
            assert label == tid
            segments[-1].append(tid)
        elif segments[-1]:
            segments.append([])
    decode = m.tokenizer.decode
    return [decode(s, skip_special_tokens=False, clean_up_tokenization_spaces=False) for s in segments if s]


def test_qwen15_history_answers_learn_their_im_end() -> None:
    assert learnt_segments("qwen1.5") == ["a1<|im_end|>", "a2<|im_end|>", "a3<|im_end|>"]


@pytest.mark.parametrize(
    ("family", "segments"),
    [
        ("qwen2.5", ["a1<|im_end|>", "a2<|im_end|>", "a3<|im_end|>"]),
        ("llama-2", [" a1 </s>", " a2 </s>", " a3 </s>"]),
        # the template closes no history turn with a stop token: nothing after the answer is learnt
        ("baichuan2", ["a1", "a2", "a3</s>"]),
        ("alpaca", ["a1", "a2", "a3</s>"]),
    ],
    ids=["qwen2.5", "llama-2", "baichuan2", "alpaca"],
)
def test_other_families_are_unchanged(family: str, segments: list[str]) -> None:
    assert learnt_segments(family) == segments
