"""The text of a local model under a strategy keeps everything the caller gave: an instruction with
slots and a leading system message.

With no model bound, the text is the prompter's layout, whose system prompt and instruction were folded
in as constants; the merged history's conversation carries its own (the system message of the
conversation, the instruction filled), so a slotted instruction and a leading system message were
silently dropped.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import ChatPrompter

SPEAKERS = [{"role": "assistant", "name": "Bob", "content": "Hi"}, {"role": "assistant", "name": "Al", "content": "Yo"}]
MERGED = "\n<|Human|>:\n## Conversation History\nBob: Hi\nAl: Yo\nuser: hi\n<|Assistant|>:\n"


@pytest.mark.parametrize("options", [{"strategy": "multi_agent"}, {"strategy": "auto"}, {"history_header": "## H"}],
                         ids=["multi_agent", "auto", "header"])
def test_a_slotted_instruction_reaches_the_text_under_a_strategy(options: dict[str, Any]) -> None:
    p = ChatPrompter("Use {a}.", system="S")
    out = p.generate_prompt({"a": "X{b}", "input": "hi"}, history=SPEAKERS, **options)
    header = options.get("history_header", "## Conversation History")
    if options.get("strategy") is None:  # a header alone changes nothing but the merged text's header
        assert out.startswith("<|start_system|>SUse X{b}.\n\n<|end_system|>")
    else:
        assert out == "<|start_system|>SUse X{b}.\n\n<|end_system|>\n\n" + MERGED.replace("## Conversation History", header)


def test_a_dict_instruction_keeps_both_parts_in_the_text() -> None:
    p = ChatPrompter({"system": "Sys {a}.", "user": "User {a}: "}, system="S")
    out = p.generate_prompt({"a": "X", "input": "hi"}, history=SPEAKERS, strategy="multi_agent")
    assert out == "<|start_system|>SSys X.<|end_system|>\n\n" + MERGED.replace("user: hi", "user: User X: hi")


def test_a_leading_system_message_is_the_system_prompt_of_the_merged_text() -> None:
    said = [{"role": "system", "content": "Be brief."}, *SPEAKERS]
    out = ChatPrompter(system="").generate_prompt(said, strategy="multi_agent")
    assert out == "<|start_system|>Be brief.<|end_system|>\n\n" + MERGED.replace("\nuser: hi", "")


def test_the_text_under_a_strategy_says_what_a_bound_model_is_given() -> None:
    # the same content as the model-bound rendering: system prompt, instruction, merged history
    p = ChatPrompter("Use {a}.", system="S")
    bound = p.generate_prompt({"a": "X", "input": "hi"}, history=SPEAKERS, strategy="multi_agent", model_format="qwen2.5")
    assert bound.startswith("<|im_start|>system\nS\nUse X.\n\n<|im_end|>")
    text = p.generate_prompt({"a": "X", "input": "hi"}, history=SPEAKERS, strategy="multi_agent")
    assert "Use X." in text and "Bob: Hi\nAl: Yo\nuser: hi" in text


def test_a_point_of_view_alone_renders_as_before() -> None:
    p = ChatPrompter("Use {a}.", system="S")
    history = [{"role": "user", "name": "Bob", "content": "Hi"}, {"role": "user", "name": "Al", "content": "Yo"}]
    out = p.generate_prompt({"a": "X", "input": "hi"}, history=history, as_agent="Al")
    assert out == (
        "<|start_system|>SUse X.\n\n<|end_system|>\n\n<|Human|>:Hi<|Assistant|>:Yo\n<|Human|>:\nhi\n<|Assistant|>:\n"
    )
