"""A bad record is a typed error that names the record, the field at fault and what to do about it."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from modules.local.training.example import TrainingExampleError
from prompter import ChatPrompter


@cache
def module() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter("Answer briefly.", enable_system=False))


BAD = [
    ({"input": "q", "output": 5}, "'output'", "write the answer as text"),
    ({"instruction": "q", "response": ["a"]}, "'response'", "write the answer as text"),
    ({"messages": "hi"}, "'messages'", "give at least the user's message and the assistant's answer"),
    ({"messages": [{"role": "assistant", "content": "a"}]}, "'messages'", "give at least the user's message"),
    (
        {"messages": [{"role": "system", "content": "s"}, {"role": "assistant", "content": "a"}]},
        "'messages'",
        "add the user's message it answers",
    ),
    (
        {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": 5}]},
        "'messages'",
        "end the chat with the assistant's answer",
    ),
]


@pytest.mark.parametrize(
    ("record", "field", "remedy"), BAD, ids=["int", "list", "str-chat", "one-message", "no-user", "int-content"]
)
def test_a_bad_record_names_itself_its_field_and_the_remedy(record: dict[str, Any], field: str, remedy: str) -> None:
    data = [{"input": "fine", "output": "ok"}, record]
    with pytest.raises(TrainingExampleError) as caught:
        module().training_examples(data, progress=False)
    message = str(caught.value)
    assert message.startswith("record 1: ")
    assert field in message
    assert remedy in message
