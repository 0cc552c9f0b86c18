"""``ModelFormat("qwen2.5")`` is a newcomer's mistake, not an empty format named qwen2.5.

The constructor's first field is ``name``; given a family name (or a model id, or a template) and
nothing else, it built a format with no markup at all, and a prompter bound to it wrote the bare
text (``"You are a helpful assistant.\\nx\\n\\nhi"``) where Qwen's chat markup belonged. It is now a
``DeclarationError`` naming the remedy: ``ModelFormat.get(...)`` or ``from_chat_template(...)``.
Formats that bring their own markup or template keep their names, registered or not.
"""

from __future__ import annotations

import dataclasses

import pytest

from prompter import ChatPrompter, ModelFormat
from prompter.errors import DeclarationError

QWEN = ModelFormat.get("qwen2.5")


@pytest.mark.parametrize(
    "name",
    ["qwen2.5", "Qwen/Qwen2.5-7B-Instruct", "LLAMA3", "gemma-2", "hermes-2-pro"],
    ids=["family", "model-id", "alias", "gemma-2", "two-templates"],
)
def test_a_registered_name_alone_is_refused_naming_the_registry(name: str) -> None:
    with pytest.raises(DeclarationError, match=r"ModelFormat\.get\('") as caught:
        ModelFormat(name)
    assert "from_chat_template" in str(caught.value)
    with pytest.raises(DeclarationError):
        ModelFormat(name=name, default_system="Be terse.", stop_words=("<|im_end|>",))


def test_the_prompter_never_renders_bare_text_for_a_family_name() -> None:
    with pytest.raises(DeclarationError, match=r"ModelFormat\.get\('qwen2\.5'\)"):
        ChatPrompter("x").generate_prompt("hi", model_format=ModelFormat("qwen2.5"))
    text = ChatPrompter("x").generate_prompt("hi", model_format=ModelFormat.get("qwen2.5"))
    assert text.startswith("<|im_start|>system\n") and text.endswith("<|im_start|>assistant\n")


def test_a_template_given_as_the_name_is_refused_naming_from_chat_template() -> None:
    template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    with pytest.raises(DeclarationError, match=r"ModelFormat\.from_chat_template\(template\)"):
        ModelFormat(template)
    assert ModelFormat(chat_template=template).render([{"role": "user", "content": "hi"}]) == "hi"


@pytest.mark.parametrize(
    "build",
    [
        lambda: ModelFormat(),
        lambda: ModelFormat("custom"),
        lambda: ModelFormat("my-plain-format"),
        lambda: ModelFormat(name="qwen2.5", chat_template=QWEN.chat_template),
        lambda: ModelFormat(name="qwen2.5", soh="<|im_start|>user\n", eoh="<|im_end|>\n"),
        lambda: ModelFormat(name="llama-3", tool_chat_template="{{ messages }}"),
        lambda: dataclasses.replace(QWEN, chat_template=None),
        lambda: dataclasses.replace(ModelFormat.get("command-r"), chat_template=None),
    ],
    ids=["default", "custom", "unregistered-name", "own-template", "own-delimiters", "tool-template",
         "replace-fixed", "replace-no-layout"],  # fmt: skip
)
def test_formats_that_bring_their_markup_or_claim_no_model_are_built(build: object) -> None:
    fmt = build()  # type: ignore[operator]
    assert isinstance(fmt, ModelFormat)
