"""A streamed chunk whose choices carry no ``index`` (or a null one) reads them by their place, as the whole
answer does: the first choice's text alone, never two choices' text run together, and a null index is no error.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from modules.online.sse import ChatStreamState, ServerSentEvent


@pytest.mark.parametrize("index", ["absent", None], ids=["absent", "null"])
def test_two_choices_without_an_index_are_not_run_together(index: object) -> None:
    def choice(text: str) -> dict[str, Any]:
        return {"delta": {"content": text}} if index == "absent" else {"index": index, "delta": {"content": text}}

    state = ChatStreamState()
    for pair in (("A", "B"), ("C", "D")):
        state.on_event(ServerSentEvent(json.dumps({"choices": [choice(pair[0]), choice(pair[1])]})))
    assert state.text == "AC"


def test_a_lone_choice_without_an_index_is_read() -> None:
    state = ChatStreamState()
    state.on_event(ServerSentEvent(json.dumps({"choices": [{"delta": {"content": "hi"}}]})))
    assert state.text == "hi"
