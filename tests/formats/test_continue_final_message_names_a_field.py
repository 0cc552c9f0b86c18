"""``continue_final_message="reasoning_content"``: the prompt ends inside the named field, as transformers ends it.

transformers takes the name of the final message's field to continue (``"reasoning_content"``:
the model goes on with its reasoning, the answer not written yet). prompter read any such string
as ``True`` and ended the prompt after the answer instead: other bytes, where transformers either
continues the reasoning (Qwen 3) or refuses (a template that never reads the field). Now the named
field is continued, a template that never reads it is a TemplateError, and a value that is neither
a bool nor a field name is a PromptTypeError.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_chat_templates_oracle import FAMILIES, normalised, tokenizer, u  # type: ignore[import-not-found]

from prompter.errors import MessageError, PromptError, PromptTypeError, TemplateError
from prompter.formats.model_format import ModelFormat

CASES: dict[str, list[dict[str, Any]]] = {
    "reasoning_content": [u("q"), {"role": "assistant", "content": "Ans", "reasoning_content": "let me think"}],
    "thinking": [u("q"), {"role": "assistant", "content": "Ans", "thinking": "let me think"}],
    "empty-answer": [u("q"), {"role": "assistant", "content": "", "reasoning_content": "step one"}],
    "no-reasoning": [u("q"), {"role": "assistant", "content": "Ans"}],
}
FIELDS = ["reasoning_content", "thinking", "reasoning", "content"]


def _oracle(family: str, messages: list[dict[str, Any]], field: str) -> str:
    msgs, _ = normalised(family, messages, None)
    return str(tokenizer(family).apply_chat_template(msgs, tokenize=False, continue_final_message=field))


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("family", FAMILIES)
def test_continuing_a_named_field_equals_transformers_or_is_refused_like_it(family: str, case: str, field: str) -> None:
    messages = CASES[case]
    fmt = ModelFormat.get(family)
    try:
        expected = _oracle(family, messages, field)
    except Exception:  # noqa: BLE001 - whatever transformers raises, we raise a typed error
        with pytest.raises((TemplateError, MessageError)):
            fmt.render(messages, continue_final_message=field)
        return
    assert fmt.render(messages, continue_final_message=field) == expected
    assert fmt.render_with_spans(messages, continue_final_message=field).text == expected


def test_qwen3_continues_its_reasoning_before_the_answer() -> None:
    messages = CASES["reasoning_content"]
    text = ModelFormat.get("qwen3").render(messages, continue_final_message="reasoning_content")
    assert text.endswith("<|im_start|>assistant\n<think>\nlet me think")


def test_a_template_that_never_reads_the_field_is_refused_naming_the_remedy() -> None:
    with pytest.raises(TemplateError, match="continue_final_message=True"):
        ModelFormat.get("qwen2.5").render(CASES["reasoning_content"], continue_final_message="reasoning_content")


@pytest.mark.parametrize("value", [1, 1.0, ["content"], {"content": True}], ids=["int", "float", "list", "dict"])
def test_a_value_neither_bool_nor_field_name_is_a_type_error(value: Any) -> None:
    with pytest.raises(PromptTypeError, match="continue_final_message"):
        ModelFormat.get("chatml").render(CASES["no-reasoning"], continue_final_message=value)


def test_a_non_text_field_is_a_message_error() -> None:
    messages = [u("q"), {"role": "assistant", "content": "Ans", "reasoning_content": "r", "extra": {"a": 1}}]
    with pytest.raises(PromptError, match="continue_final_message"):
        ModelFormat.get("qwen3").render(messages, continue_final_message="extra")
