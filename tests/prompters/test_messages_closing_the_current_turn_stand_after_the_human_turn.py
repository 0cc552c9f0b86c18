"""In text output with no model bound, a system or assistant message that follows the user's text in
the current turn is a turn of its own: it is rendered where it stands, in its own delimiters (as
history renders it), after the human turn and before the assistant prompt.

Before, it was written inside the human turn (``<|Human|>:\\nq\\n<|start_system|>MID<|end_system|>\\n``),
so the model read the operator's instruction, or its own earlier answer, as the user's words, while
the same message opening the turn (or given in ``history=``) already stood in its own place. LazyLLM
1.4.0 refuses message input as text, so there is no upstream output to match.
"""

from __future__ import annotations

import pytest

from prompter import ChatPrompter, PrompterBase
from prompter.errors import UnsupportedContentError

USER = {"role": "user", "content": "q"}
SYSTEM = {"role": "system", "content": "MID"}
ASSISTANT = {"role": "assistant", "content": "A"}
TOOL = {"role": "tool", "tool_call_id": "c1", "content": "18"}
HEAD = "<|start_system|>S<|end_system|>\n\n\n<|Human|>:\n"


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ([USER, SYSTEM], HEAD + "q\n<|start_system|>MID<|end_system|><|Assistant|>:\n"),
        ([USER, ASSISTANT], HEAD + "q\n<|Assistant|>:A<|Assistant|>:\n"),
        ([USER, SYSTEM, ASSISTANT], HEAD + "q\n<|start_system|>MID<|end_system|><|Assistant|>:A<|Assistant|>:\n"),
        ([TOOL, SYSTEM], HEAD + "18\n<|start_system|>MID<|end_system|><|Assistant|>:\n"),
    ],
    ids=["system", "assistant", "both", "after-a-tool-result"],
)
def test_a_message_after_the_users_text_stands_after_the_human_turn(said: list[dict], expected: str) -> None:
    assert ChatPrompter(system="S").generate_prompt(said) == expected


def test_closing_messages_read_as_the_same_messages_in_history() -> None:
    p = ChatPrompter(system="S")
    closing = p.generate_prompt([USER, SYSTEM, ASSISTANT])
    human_turn = p.generate_prompt([USER])
    in_history = ChatPrompter(system="").generate_prompt("", history=[SYSTEM, ASSISTANT])
    between = in_history[in_history.index("<|start_system|>MID") : in_history.index("\n<|Human|>:")]
    assert closing == human_turn.removesuffix("<|Assistant|>:\n") + between + "<|Assistant|>:\n"


def test_opening_and_closing_messages_both_stand_where_they_are() -> None:
    text = ChatPrompter(system="S").generate_prompt([SYSTEM, USER, ASSISTANT], history=[["h", "ha"]])
    assert text == (
        "<|start_system|>S<|end_system|>\n\n<|Human|>:h<|Assistant|>:ha<|start_system|>MID<|end_system|>\n"
        "<|Human|>:\nq\n<|Assistant|>:A<|Assistant|>:\n"
    )


def test_the_user_instruction_and_the_label_keep_their_places() -> None:
    p = ChatPrompter({"system": "Sys.", "user": "U: "}, system="")
    text = p.generate_prompt([USER, SYSTEM], label="L")
    assert text == "<|start_system|>Sys.<|end_system|>\n\n\n<|Human|>:\nU: q\n<|start_system|>MID<|end_system|><|Assistant|>:\nL"


def test_the_api_body_keeps_the_order_it_always_had() -> None:
    body = ChatPrompter(system="S").generate_prompt([USER, SYSTEM], format="openai")
    assert body["messages"] == [{"role": "system", "content": "S"}, USER, SYSTEM]


def test_a_declared_layout_puts_them_before_its_assistant_prompt() -> None:
    class Brief(PrompterBase):
        template = "{system}{instruction}{tools}{history}[{soh}{user}{input}{eoh}]{soa}>"

    text = Brief(system="").generate_prompt([USER, SYSTEM])
    assert text == "[<|Human|>:q]<|start_system|>MID<|end_system|><|Assistant|>:>"


def test_a_closing_message_that_cannot_be_text_is_named_where_it_stands() -> None:
    image = {"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "data:x"}}]}
    with pytest.raises(UnsupportedContentError, match=r"input\[1\]\.content"):
        ChatPrompter().generate_prompt([USER, image])
