"""``from_chat_template`` checks what it is given before hashing or running any of it.

A source that is not a str, a named-template mapping with a name that is not a str, a
token or a name of the wrong type is a typed error naming the argument, never a bare
``TypeError`` from the compile cache or the prober. A str subclass, however hostile its
``__hash__``, ``__eq__`` or ``__str__``, is read as its exact text: the format renders as
the same template given as a plain str.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter.errors import PromptTypeError, TemplateError
from prompter.formats.model_format import ModelFormat

TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
USER = [{"role": "user", "content": "hi"}]


class Hostile(str):
    """A str whose hashing, comparing and printing all raise."""

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __str__(self) -> str:
        raise RuntimeError("str")


class Tagged(str):
    """An ordinary str subclass."""


@pytest.mark.parametrize(
    "source",
    [["{{ messages }}"], ("default", TEMPLATE), {"default"}, 3.5],
    ids=["list", "tuple", "set", "float"],
)
def test_a_source_of_the_wrong_type_is_a_template_error(source: Any) -> None:
    with pytest.raises(TemplateError, match="expected jinja source as str, got"):
        ModelFormat.from_chat_template(source)


def test_a_named_template_name_that_is_not_a_str_is_a_template_error() -> None:
    with pytest.raises(TemplateError, match="template names must be str, got int"):
        ModelFormat.from_chat_template({"default": TEMPLATE, 3: TEMPLATE})


def test_a_named_template_that_is_not_a_str_is_named_in_the_error() -> None:
    with pytest.raises(TemplateError, match="chat template 'tool_use': expected jinja source as str, got list"):
        ModelFormat.from_chat_template({"default": TEMPLATE, "tool_use": ["x"]})


@pytest.mark.parametrize(
    ("argument", "value"),
    [("bos_token", 5), ("eos_token", b"</s>"), ("name", 3), ("bos_token", ["<s>"])],
    ids=["bos-int", "eos-bytes", "name-int", "bos-list"],
)
def test_tokens_and_name_of_the_wrong_type_are_prompt_type_errors(argument: str, value: Any) -> None:
    with pytest.raises(PromptTypeError, match=f"from_chat_template: {argument}: expected str or None"):
        ModelFormat.from_chat_template(TEMPLATE, **{argument: value})


@pytest.mark.parametrize("kind", [Hostile, Tagged], ids=["hostile", "tagged"])
def test_str_subclasses_are_read_as_their_exact_text(kind: type[str]) -> None:
    plain = ModelFormat.from_chat_template(TEMPLATE, bos_token="<s>", eos_token="</s>", name="mine")
    fmt = ModelFormat.from_chat_template(kind(TEMPLATE), bos_token=kind("<s>"), eos_token=kind("</s>"), name=kind("mine"))
    assert type(fmt.chat_template) is str and type(fmt.bos_token) is str and type(fmt.name) is str
    assert fmt == plain
    assert fmt.render(USER) == plain.render(USER) == "<|user|>hi</s><|assistant|>"


@pytest.mark.parametrize("kind", [Hostile, Tagged], ids=["hostile", "tagged"])
def test_named_templates_given_as_str_subclasses_are_read_as_their_exact_text(kind: type[str]) -> None:
    fmt = ModelFormat.from_chat_template({Tagged("default"): kind(TEMPLATE), Tagged("tool_use"): kind(TEMPLATE)})
    assert type(fmt.chat_template) is str and type(fmt.tool_chat_template) is str
    assert fmt.render(USER) == "<|user|>hi</s><|assistant|>"
