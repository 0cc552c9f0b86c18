"""A record the prompter refuses (a bad history, bad tools, a missing slot) is named by its index.

Only the training code's own errors said ``record i:``; a prompter error from the 5,000th
record of a dataset left the user to search for it. The error keeps its type (a
``HistoryError`` stays one) and gains the record's index.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import AlpacaPrompter, ChatPrompter
from prompter.errors import HistoryError, MissingSlotError, ToolsError

GOOD = {"input": "What is the capital of Peru?", "output": "Lima"}


@pytest.fixture(scope="module")
def path() -> Any:
    from modules.local.tiny_model import cached_tiny_model

    return cached_tiny_model("qwen2.5")


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ({**GOOD, "history": [["only a question"]]}, HistoryError),
        ({**GOOD, "tools": "get_weather"}, ToolsError),
    ],
    ids=["history", "tools"],
)
def test_a_prompter_error_names_the_record_and_keeps_its_type(path: Any, bad: dict[str, Any], error: type) -> None:
    from modules.local.trainable import TrainableModule

    module = TrainableModule(path).prompt(ChatPrompter("Answer briefly.", enable_system=False))
    with pytest.raises(error, match=r"^record 2: "):
        module.training_examples([GOOD, GOOD, bad, GOOD], progress=False)


def test_a_missing_slot_names_the_record(path: Any) -> None:
    from modules.local.trainable import TrainableModule

    module = TrainableModule(path).prompt(AlpacaPrompter("Translate {text} into {language}."))
    records = [{"text": "hi", "language": "French", "output": "salut"}, {"text": "hi", "output": "salut"}]
    with pytest.raises(MissingSlotError, match=r"^record 1: .*language"):
        module.training_examples(records, progress=False)
