"""An empty message list is refused, as transformers refuses it, on every path.

``apply_chat_template([])`` raises ("Cannot apply chat template to an empty
conversation"); the fast paths used to answer with a bare ``<s>`` or a lone
generation prompt, and the template path with whatever the template writes for no
messages: a prompt of nothing a model was trained on.
"""

from __future__ import annotations

import pytest

from prompter import ModelFormat
from prompter.errors import MessageError

FAMILIES = ["qwen2.5", "llama-3", "mistral-nemo", "deepseek-v3", "gemma-2", "phi-3", "command-r"]


@pytest.mark.parametrize("empty", [[], ()], ids=["list", "tuple"])
@pytest.mark.parametrize("family", FAMILIES)
def test_an_empty_conversation_is_a_message_error_on_every_path(family: str, empty: list[object]) -> None:
    fmt = ModelFormat.get(family)
    for _ in range(3):  # warm fast paths included
        fmt.render([{"role": "user", "content": "hi"}])
        for call in (
            lambda: fmt.render(empty),
            lambda: fmt.render(empty, add_generation_prompt=False),
            lambda: fmt.render(empty, tools=[]),
            lambda: fmt.render(empty, documents=[{"title": "t", "text": "x"}]),
            lambda: fmt.render(empty, continue_final_message=True),
            lambda: fmt.render_with_spans(empty),
        ):
            with pytest.raises(MessageError, match="at least one"):
                call()


def test_a_format_without_a_template_refuses_an_empty_conversation_too() -> None:
    fmt = ModelFormat(name="mine", soh="Q: ", eoh="\n", soa="A: ", eoa="\n", generation_prompt="A:")
    with pytest.raises(MessageError, match="empty list"):
        fmt.render([])
