"""A chat record's system message is left out (the prompter supplies the system prompt, as at inference),
and it is said, not silent: before the fix a dataset of per-record personas trained without them, and
nothing told the user.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from prompter import ChatPrompter

CHAT = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Arr"}]


def module() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter("Answer briefly.", enable_system=False))


def test_a_left_out_system_message_is_said_and_the_prompt_is_the_inference_prompt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    m = module()
    records = [{"messages": [{"role": "system", "content": "You are a pirate."}, *CHAT]}, {"messages": CHAT}]
    with caplog.at_level(logging.WARNING, logger="modules.local.training.data"):
        examples = m.training_examples(records, progress=False)
    assert "1 chat record(s) carry a system message, left out" in caplog.text
    assert examples[0] == examples[1]
    assert examples[0]["input_ids"][: examples[0].prompt_length] == list(m.build_request("Hi").input_ids)


def test_no_word_when_no_record_has_a_system_message(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="modules.local.training.data"):
        module().training_examples([{"messages": CHAT}], progress=False)
    assert "system message" not in caplog.text
