"""A retriever writes a repeated choice of examples once, yet no call sees another call's edits or stale examples.

Found by a probe: ``generate_ice`` kept the examples it wrote (for FixK, the same ones every call)
and handed out a shallow copy, so a caller editing the turns it got changed what the next call got;
and an index example edited after the retriever was made was never written again (OpenCompass
reads its dataset on every call, so it writes the edit).
"""

from __future__ import annotations

from prompter.templates import PromptTemplate
from prompter.templates.retrievers import FixKRetriever

QA = PromptTemplate({"round": [{"role": "HUMAN", "prompt": "{q}"}, {"role": "BOT", "prompt": "{a}"}]})


def _turns(ice: object) -> list[object]:
    return [dict(x) if isinstance(x, dict) else x for x in ice]  # type: ignore[attr-defined]


def test_editing_the_turns_one_call_got_does_not_change_the_next_calls() -> None:
    retriever = FixKRetriever([{"q": "1+1", "a": "2"}], fix_id_list=[0], output_column="a")
    first = retriever.generate_ice([0], QA)
    before = _turns(first)
    for turn in first:
        if isinstance(turn, dict) and "prompt" in turn:
            turn["prompt"] = "MUTATED"
    assert _turns(retriever.generate_ice([0], QA)) == before


def test_an_index_example_edited_after_the_retriever_was_made_is_written_as_it_is_now() -> None:
    example = {"q": "1+1", "a": "2"}
    retriever = FixKRetriever([example], fix_id_list=[0], output_column="a")
    template = PromptTemplate("{q}={a}")
    assert retriever.generate_ice([0], template) == "1+1=2\n"
    example["q"] = "9+9"
    assert retriever.generate_ice([0], template) == "9+9=2\n"
    assert retriever.generate_ice([0], template) == "9+9=2\n"


def test_a_repeated_choice_gives_equal_text_every_call() -> None:
    retriever = FixKRetriever([{"q": f"{i}+{i}", "a": str(2 * i)} for i in range(5)], fix_id_list=[3, 1])
    template = PromptTemplate("{q}={a}")
    texts = {retriever.generate_ice([3, 1], template) for _ in range(5)}
    assert texts == {"3+3=6\n1+1=2\n"}
