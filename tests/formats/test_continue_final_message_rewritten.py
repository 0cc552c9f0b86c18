"""``continue_final_message`` where the template rewrites the final message: refused, as transformers refuses it.

A prompt that continues the final message must end inside that message's text. Templates that
rewrite an assistant's text (Qwen 3 and DeepSeek-R1 move ``<think>...</think>`` around, adding
newlines) do not write the caller's text at all: transformers raises ("the final message does
not appear in the chat after applying the chat template"), and so must we, instead of returning
a prompt that continues a text the caller never sent. Every other family still ends the prompt
where transformers ends it.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_chat_templates_oracle import FAMILIES, SYS, a, normalised, tokenizer, u  # type: ignore[import-not-found]

from prompter.errors import TemplateError
from prompter.formats.model_format import ModelFormat

CASES: dict[str, list[dict[str, Any]]] = {
    "assistant-prefix": [SYS, u("q"), a("The answer is")],
    "thinking-then-answer": [u("q"), a("<think>hmm</think>Ans")],
}


def _oracle(family: str, messages: list[dict[str, Any]]) -> str:
    msgs, _ = normalised(family, messages, None)
    return str(tokenizer(family).apply_chat_template(msgs, tokenize=False, continue_final_message=True))


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("family", FAMILIES)
def test_continue_final_message_equals_transformers_or_is_refused_like_it(family: str, case: str) -> None:
    messages = CASES[case]
    fmt = ModelFormat.get(family)
    try:
        expected = _oracle(family, messages)
    except ValueError:  # transformers: the final message does not appear in the rendered chat
        for _ in range(2):
            with pytest.raises(TemplateError, match="continue_final_message"):
                fmt.render(messages, continue_final_message=True)
        with pytest.raises(TemplateError, match="continue_final_message"):
            fmt.render_with_spans(messages, continue_final_message=True)
        return
    assert fmt.render(messages, continue_final_message=True) == expected
    assert fmt.render_with_spans(messages, continue_final_message=True).text == expected


@pytest.mark.parametrize("family", ["qwen3", "deepseek-r1"])
def test_a_rewritten_thinking_message_is_not_continued(family: str) -> None:
    with pytest.raises(TemplateError, match="rewrites the final message"):
        ModelFormat.get(family).render([u("q"), a("<think>hmm</think>Ans")], continue_final_message=True)
