"""A list-form API meta template's messages reach the model whatever form the prompt has.

``build_meta([dict(role="system", content=...)])`` (OpenCompass's list form) wove its
messages into OpenAI-style messages only: a dataset prompt (a dialogue ``PromptList``, or
a string) went through ``parse_api`` without them, so the system prompt the config names
was silently dropped. Upstream raises on a PromptList here (its parser looks for round
roles a list-form meta template does not have) and passes a string through unchanged, which
compat mode keeps.
"""

from __future__ import annotations

import pytest

from prompter.templates import PromptList, PromptTemplate
from prompter.templates.config import build_meta

PREFIX = [{"role": "system", "content": "Answer in one word."}]
DIALOGUE = PromptTemplate(dict(round=[dict(role="HUMAN", prompt="Q: {q}"), dict(role="BOT", prompt="{a}")]))


@pytest.mark.parametrize("compat", [None, "opencompass"])
def test_a_dialogue_prompt_keeps_the_list_form_messages(compat: str | None) -> None:
    prompt = DIALOGUE.generate_item({"q": "1+1=?", "a": "2"}, output_field="a")
    assert isinstance(prompt, PromptList)
    assert build_meta(PREFIX, compat=compat).parse_api(prompt) == [  # type: ignore[arg-type]
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Q: 1+1=?"},
    ]


def test_a_string_prompt_keeps_the_list_form_messages_in_the_default_mode() -> None:
    assert build_meta(PREFIX).parse_api("Q: 1+1=?") == [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Q: 1+1=?"},
    ]
    assert build_meta(PREFIX, compat="opencompass").parse_api("Q: 1+1=?") == "Q: 1+1=?"  # upstream's own value


def test_a_round_meta_template_without_messages_is_unchanged() -> None:
    meta = build_meta(dict(round=[dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)]))
    prompt = DIALOGUE.generate_item({"q": "1+1=?", "a": "2"}, output_field="a")
    assert meta.parse_api(prompt) == [{"role": "HUMAN", "prompt": "Q: 1+1=?"}]
