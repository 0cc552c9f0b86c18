"""Invariants of the evaluation-harness layer over generated values.

Dataset values and in-context examples that look like template syntax (``{question}``,
``{{``, the ice token ``</E>``, the separator, a meta template's delimiters) are data:
they appear verbatim, exactly once, where they belong; nothing is filled twice, the
caller's objects are never changed, and bad input raises only PromptError.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompter.errors import PromptError
from prompter.templates import MetaTemplate, MMPromptTemplate, MultiTurnPromptTemplate, PromptList, PromptTemplate

EXAMPLES = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEWER = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEWEST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TRICKY = st.sampled_from(
    ["{question}", "{answer}", "{other}", "{q}", "{{", "}}", "{", "}", "{0}", "{}", "</E>", "<SEP>", "<E>",
     "<HUMAN>: ", "<eoh>\n", "<BOT>: ", "\n", "", "é", "😀", "%s", "$answer", "<AIS_CONTENT_TAG>"]
)  # fmt: skip
VALUE = st.lists(st.one_of(TRICKY, st.text(max_size=6)), max_size=5).map("".join)

ICE_T = PromptTemplate("{question}={answer}")
PROMPT_T = PromptTemplate("Solve {other}.\n</E>Q: {question}<SEP>\nA: {answer}", ice_token="</E>", sep_token="<SEP>")
DIALOGUE_ICE_T = PromptTemplate(
    {"round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}]}
)
DIALOGUE_T = PromptTemplate(
    {
        "begin": [{"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "Solve {other}."}, "</E>"],
        "round": [{"role": "HUMAN", "prompt": "Q: {question}"}, {"role": "BOT", "prompt": "A: {answer}"}],
    },
    ice_token="</E>",
)
META = MetaTemplate(
    round=[
        {"role": "HUMAN", "begin": "<HUMAN>: ", "end": "<eoh>\n"},
        {"role": "BOT", "begin": "<BOT>: ", "end": "<eob>\n", "generate": True},
    ],
    reserved_roles=[{"role": "SYSTEM", "begin": "<SYSTEM>: ", "end": "<eosys>\n"}],
    begin="<s>",
)
EXAMPLE = st.fixed_dictionaries({"question": VALUE, "answer": VALUE})


@EXAMPLES
@given(shots=st.lists(EXAMPLE, max_size=2), question=VALUE, answer=VALUE, other=VALUE)
def test_values_appear_verbatim_once_where_they_belong(
    shots: list[dict[str, str]], question: str, answer: str, other: str
) -> None:
    entry = {"question": question, "answer": answer, "other": other}
    before = copy.deepcopy((shots, entry))
    # string templates
    ice = ICE_T.generate_ice(shots)
    expected_ice = "".join(f"{s['question']}={s['answer']}\n" for s in shots)
    assert ice == expected_ice
    assert PROMPT_T.generate_item(entry, output_field="answer", ice_field_replace_token=ice) == (
        f"Solve {other}.\n{expected_ice}Q: {question}\nA: "
    )
    assert PROMPT_T.generate_label_prompt_item(entry, ice, None, remain_sep=True) == (
        f"Solve {other}.\n{expected_ice}Q: {question}<SEP>\nA: {answer}"
    )
    # dialogue templates through a meta template
    dialogue_ice = DIALOGUE_ICE_T.generate_ice(shots)
    prompt = DIALOGUE_T.generate_item(entry, output_field="answer", ice_field_replace_token=dialogue_ice)
    shots_text = "".join(f"<HUMAN>: {s['question']}<eoh>\n<BOT>: {s['answer']}<eob>\n" for s in shots)
    head = f"<s><SYSTEM>: Solve {other}.<eosys>\n{shots_text}<HUMAN>: Q: {question}<eoh>\n<BOT>: "
    assert META.parse(prompt, "gen") == head
    full = DIALOGUE_T.generate_label_prompt_item(entry, dialogue_ice, None)
    assert META.parse(full, "ppl") == f"{head}A: {answer}<eob>\n"
    assert (shots, entry) == before


@FEWER
@given(values=st.dictionaries(st.sampled_from(["a", "b", "c"]), VALUE), text=VALUE)
def test_prompt_list_format_and_replace_are_one_pass(values: dict[str, str], text: str) -> None:
    pl = PromptList(["{a}|{b}", {"role": "HUMAN", "prompt": "{c}</E>"}])
    got = pl.format(**values)
    show = {k: values.get(k, "{" + k + "}") for k in "abc"}
    assert got == [f"{show['a']}|{show['b']}", {"role": "HUMAN", "prompt": f"{show['c']}</E>"}]
    assert got.replace("</E>", text)[1] == {"role": "HUMAN", "prompt": f"{show['c']}".replace("</E>", text) + text}
    assert pl == ["{a}|{b}", {"role": "HUMAN", "prompt": "{c}</E>"}]


@FEWER
@given(questions=st.lists(VALUE, min_size=1, max_size=4), data=st.data())
def test_multi_turn_values_verbatim(questions: list[str], data: st.DataObject) -> None:
    answers = data.draw(st.lists(VALUE, min_size=len(questions), max_size=len(questions)))
    t = MultiTurnPromptTemplate({"round": [{"role": "HUMAN", "prompt": "{q}"}, {"role": "BOT", "prompt": "{a}"}]})
    entry = {"q": list(questions), "a": list(answers)}
    (last,) = t.generate_turns(entry, "last", "a")
    expected: list[Any] = []
    for q, a in zip(questions[:-1], answers[:-1]):
        expected += [{"role": "HUMAN", "prompt": q}, {"role": "BOT", "prompt": a}]
    assert last.strip_sections() == [*expected, {"role": "HUMAN", "prompt": questions[-1]}]
    assert entry == {"q": questions, "a": answers}


MEDIA = VALUE.filter(lambda v: "<AIS_" not in v)


@FEWER
@given(text=MEDIA, image=MEDIA)
def test_multimodal_pieces_verbatim(text: str, image: str) -> None:
    t = MMPromptTemplate({"round": [{"role": "HUMAN", "prompt_mm": {"text": "T:{question}", "image": "u/{image}"}}]})
    q = f"<AIS_TEXT_START>{text}<AIS_CONTENT_TAG><AIS_IMAGE_START>{image}<AIS_CONTENT_TAG>"
    got = t.generate_item({"question": q}).strip_sections()
    assert got == [
        {
            "role": "HUMAN",
            "prompt": [
                {"type": "text", "text": f"T:{text}"},
                {"type": "image_url", "image_url": {"url": f"u/{image}"}},
            ],
        }
    ]


JUNK = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), VALUE),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["role", "prompt", "section", "pos", "q"]), inner, max_size=3)),
    max_leaves=8,
)  # fmt: skip


@FEWEST
@given(
    entry=st.dictionaries(st.sampled_from(["question", "answer", "other", "q"]), JUNK),
    prompt=st.lists(JUNK, max_size=4),
)
def test_bad_input_raises_only_prompt_errors(entry: dict[str, Any], prompt: list[Any]) -> None:
    before = copy.deepcopy((entry, prompt))
    for call in (
        lambda: PROMPT_T.generate_item(entry, output_field="answer"),
        lambda: DIALOGUE_T.generate_label_prompt_item(entry, PromptList(), None),
        lambda: META.parse(PromptList(prompt)),
        lambda: META.parse_api(PromptList(prompt)),
        lambda: PromptList(prompt).format(**{str(k): v for k, v in entry.items()}),
    ):
        try:
            call()
        except PromptError:
            pass
    assert (entry, prompt) == before
