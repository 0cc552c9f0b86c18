"""In text output with no model bound, a system or assistant message BETWEEN user messages (or tool
results) of the current turn is a turn of its own, and so is what comes before it: every message
renders where it stands, as history renders it. The earlier messages are complete turns, the last
run of user messages and tool results is the human turn, before the assistant prompt, so the text
equals ``generate_prompt(last_text, history=<the earlier messages>)``.

Before, only a message opening the turn (388a603) or closing it (9b4f100) stood in its own place; one
in the middle was written inside the human turn (``<|Human|>:\\nq\\n<|Assistant|>:A\\nq2\\n``), so the
model read its own earlier answer, or the operator's instruction, as the user's words, and an agent
loop's ``[question, tool call, tool result]`` read as one long user message. LazyLLM 1.4.0 refuses
message input as text, so there is no upstream output to match.
"""

from __future__ import annotations

import itertools

import pytest

from prompter import ChatPrompter, PrompterBase
from prompter.errors import UnsupportedContentError

Q = {"role": "user", "content": "q"}
Q2 = {"role": "user", "content": "q2"}
SYSTEM = {"role": "system", "content": "MID"}
ANSWER = {"role": "assistant", "content": "A"}
CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}],
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "18"}
RESULT2 = {"role": "tool", "tool_call_id": "c2", "content": "19"}


def test_an_assistant_message_between_two_questions_is_an_earlier_turn() -> None:
    text = ChatPrompter(system="S").generate_prompt([Q, ANSWER, Q2])
    assert text == "<|start_system|>S<|end_system|>\n\n<|Human|>:q<|Assistant|>:A\n<|Human|>:\nq2\n<|Assistant|>:\n"


@pytest.mark.parametrize(
    ("earlier", "last"),
    [
        ([Q, ANSWER], Q2),
        ([Q, SYSTEM], Q2),
        ([Q, SYSTEM, ANSWER], Q2),
        ([SYSTEM, Q, ANSWER], Q2),
        ([Q, CALL], RESULT),
        ([Q, CALL, RESULT, ANSWER], Q2),
        ([Q, Q2, ANSWER], Q),
    ],
    ids=["assistant", "system", "both", "after-a-lead", "agent-loop", "after-a-tool-round", "two-questions-first"],
)
@pytest.mark.parametrize("history", [None, [["h", "ha"]]], ids=["no-history", "with-history"])
def test_the_current_turn_reads_as_the_same_messages_in_history(
    earlier: list[dict], last: dict, history: list | None
) -> None:
    p = ChatPrompter(system="S")
    text = p.generate_prompt([*earlier, last], history=history)
    assert text == p.generate_prompt(last, history=[*(history or []), *earlier])
    if last["role"] == "user":
        assert text == p.generate_prompt(last["content"], history=[*(history or []), *earlier])


def test_every_order_of_messages_ending_in_a_question_reads_as_history() -> None:
    p = ChatPrompter(system="")
    for size in range(1, 4):
        for earlier in itertools.product([Q, SYSTEM, ANSWER, CALL, RESULT], repeat=size):
            if earlier[-1]["role"] in ("user", "tool"):
                continue  # a run of user messages and tool results is one human turn (below)
            said = [*earlier, Q2]
            assert p.generate_prompt(said) == p.generate_prompt("q2", history=list(earlier)), said


def test_the_last_run_of_questions_and_tool_results_is_one_human_turn() -> None:
    p = ChatPrompter(system="")
    # parallel tool results answer one call message: they are the human turn together, as before
    assert p.generate_prompt([Q, CALL, RESULT, RESULT2]).endswith("<|Human|>:\n18\n19\n<|Assistant|>:\n")
    assert p.generate_prompt([Q, Q2]) == "<|start_system|><|end_system|>\n\n\n<|Human|>:\nq\nq2\n<|Assistant|>:\n"


def test_a_closing_message_still_stands_after_the_human_turn() -> None:
    text = ChatPrompter(system="S").generate_prompt([Q, ANSWER, Q2, SYSTEM])
    assert text == (
        "<|start_system|>S<|end_system|>\n\n<|Human|>:q<|Assistant|>:A\n<|Human|>:\nq2\n"
        "<|start_system|>MID<|end_system|><|Assistant|>:\n"
    )


def test_the_user_instruction_and_the_label_stay_with_the_human_turn() -> None:
    p = ChatPrompter({"system": "Sys.", "user": "U: "}, system="")
    text = p.generate_prompt([Q, ANSWER, Q2], label="L")
    assert text == "<|start_system|>Sys.<|end_system|>\n\n<|Human|>:q<|Assistant|>:A\n<|Human|>:\nU: q2\n<|Assistant|>:\nL"


def test_a_declared_layout_puts_the_earlier_turns_in_its_history_field() -> None:
    class Brief(PrompterBase):
        template = "{system}{instruction}{tools}({history})[{soh}{user}{input}{eoh}]{soa}>"

    text = Brief(system="").generate_prompt([Q, ANSWER, Q2])
    assert text == "(<|Human|>:q<|Assistant|>:A)[<|Human|>:q2]<|Assistant|>:>"


def test_the_api_body_keeps_the_order_it_always_had() -> None:
    body = ChatPrompter(system="S").generate_prompt([Q, ANSWER, Q2], format="openai")
    assert body["messages"] == [{"role": "system", "content": "S"}, Q, ANSWER, Q2]


def test_an_earlier_message_that_cannot_be_text_is_named_where_it_stands() -> None:
    image = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:x"}}]}
    with pytest.raises(UnsupportedContentError, match=r"input\[0\]\.content"):
        ChatPrompter().generate_prompt([image, ANSWER, Q2])
