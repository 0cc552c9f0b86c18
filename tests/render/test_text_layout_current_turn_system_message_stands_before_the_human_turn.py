"""In text output with no model bound, a system or assistant message opening the current turn is a
turn of its own: it is rendered where it stands, in its own delimiters, before the human turn the
layout frames ``{input}`` in, exactly as the same message given in ``history=`` is.

Before, it was written inside the human turn: ``<|Human|>:\\n<|start_system|>MID<|end_system|>`` (and
an assistant message as ``<|Human|>:\\n<|Assistant|>:A1\\nq``), so the model read the operator's
instruction, or its own earlier answer, as the user's words. (LazyLLM 1.4.0 refuses a message dict
as text input, so there is no upstream output to match; its documented difference for history is
"rendered where it stands, in the system delimiters".)
"""

from __future__ import annotations

import pytest

from prompter import ChatPrompter

SYSTEM = {"role": "system", "content": "Answer in French."}
ASSISTANT = {"role": "assistant", "content": "Bonjour."}
USER = {"role": "user", "content": "Hi."}


@pytest.mark.parametrize("system", ["Be brief.", ""], ids=["system", "no-system"])
def test_a_system_message_as_the_current_turn_reads_as_the_same_message_in_history(system: str) -> None:
    p = ChatPrompter(system=system)
    text = p.generate_prompt(SYSTEM)
    assert text == p.generate_prompt("", history=[SYSTEM])
    assert "<|Human|>:\n<|start_system|>" not in text
    assert text.index("<|start_system|>Answer in French.<|end_system|>") < text.index("<|Human|>:")


@pytest.mark.parametrize("lead", [[SYSTEM], [ASSISTANT], [SYSTEM, ASSISTANT]], ids=["system", "assistant", "both"])
def test_leading_messages_stand_before_the_question(lead: list[dict]) -> None:
    p = ChatPrompter(system="Be brief.")
    assert p.generate_prompt([*lead, USER]) == p.generate_prompt("Hi.", history=lead)


def test_after_history_the_lead_keeps_its_order() -> None:
    p = ChatPrompter(system="Be brief.")
    history = [["What is 2+2?", "4"]]
    text = p.generate_prompt([SYSTEM, USER], history=history)
    assert text == p.generate_prompt("Hi.", history=[*history, SYSTEM])
    assert text.index("4") < text.index("Answer in French.") < text.index("<|Human|>:\nHi.")


def test_a_question_first_still_fills_the_human_turn() -> None:
    p = ChatPrompter(system="")
    assert p.generate_prompt([USER]) == p.generate_prompt("Hi.")
    # a tool result is the human turn's own content, as before
    result = {"role": "tool", "tool_call_id": "c1", "content": "18"}
    assert "<|Human|>:\n18\n" in p.generate_prompt(result)
