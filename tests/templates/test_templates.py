"""Specification of the dataset side: PromptList and PromptTemplate (OpenCompass prompt templates)."""

from __future__ import annotations

import copy
import subprocess
import sys
from typing import Any

import pytest

import prompter.templates
from prompter.errors import (
    EvalTemplateError,
    InputTypeError,
    MissingSlotError,
    PromptError,
    UnknownLabelError,
)
from prompter.templates import PromptList, PromptTemplate

H, B, S = "HUMAN", "BOT", "SYSTEM"


def turn(role: str, prompt: str, **extra: str) -> dict[str, Any]:
    """A role turn as the reference documents write it."""
    return {"role": role, "prompt": prompt, **extra}


SYSTEM_TURN = turn(S, "Solve the following questions.", fallback_role=H)

# the samples of the OpenCompass guide
EX1 = {"question": "2+2=?", "answer": "4", "irrelavent_infos": "blabla"}
EX2 = {"question": "3+3=?", "answer": "6", "irrelavent_infos": "blabla"}
EX3 = {"question": "1+1=?", "answer": "2", "irrelavent_infos": "blabla"}


def test_public_names() -> None:
    assert prompter.templates.__all__ == [
        "MMPromptTemplate",
        "MetaTemplate",
        "MultiTurnPromptTemplate",
        "PromptList",
        "PromptTemplate",
        "RoleSpec",
    ]
    for name in prompter.templates.__all__:
        assert getattr(prompter.templates, name).__module__.startswith("prompter.templates.")


def test_import_is_cheap() -> None:
    code = (
        "import sys; before = set(sys.modules); import prompter.templates; "
        "new = set(sys.modules) - before; "
        "print(sorted(m for m in new if not m.startswith('prompter') and m.split('.')[0] not in sys.stdlib_module_names))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- PromptList -------------------------------------------------------------------------------------

PL_CASES = [
    pytest.param(PromptList(["{a}-{b}"]).format(a="{b}", b="2"), ["{b}-2"], id="format-one-pass"),
    pytest.param(PromptList(["{a} {missing}"]).format(a=1), ["1 {missing}"], id="format-keeps-unknown"),
    pytest.param(
        PromptList([turn(H, "Q: {q}", fallback_role=H), {"section": "round", "pos": "begin"}]).format(q="x"),
        [turn(H, "Q: x", fallback_role=H), {"section": "round", "pos": "begin"}],
        id="format-turn-and-marker",
    ),
    pytest.param(PromptList(["a</E>b</E>"]).replace("</E>", "<x>"), ["a<x>b<x>"], id="replace-str"),
    pytest.param(
        PromptList(["S\n</E>", turn(H, "q")]).replace("</E>", PromptList([turn(H, "1"), turn(B, "2")])),
        ["S\n", turn(H, "1"), turn(B, "2"), turn(H, "q")],
        id="replace-splice-list",
    ),
    pytest.param(PromptList([turn(H, "a</E>")]).replace("</E>", "!"), [turn(H, "a!")], id="replace-in-prompt"),
    pytest.param(PromptList(["a"]) + "b", ["a", "b"], id="add-str-is-one-item"),
    pytest.param("z" + PromptList(["a"]), ["z", "a"], id="radd-str"),
    pytest.param(PromptList(["a"]) + [turn(B, "x")], ["a", turn(B, "x")], id="add-list"),
    pytest.param(PromptList(["a"]) + "", ["a"], id="add-empty-str"),
    pytest.param(PromptList(["a", {"section": "ice", "pos": "end"}]).strip_sections(), ["a"], id="strip-sections"),
]


@pytest.mark.parametrize(("got", "expected"), PL_CASES)
def test_prompt_list(got: PromptList, expected: list[Any]) -> None:
    assert isinstance(got, PromptList)
    assert got == expected


def test_prompt_list_str_and_repr() -> None:
    pl = PromptList(["A", {"section": "round", "pos": "begin"}, turn(H, "B"), {"role": B}])
    assert str(pl) == "AB"
    assert repr(PromptList(["x"])) == "PromptList(['x'])"
    assert isinstance(pl[1:], PromptList)


def test_prompt_list_iadd_appends_a_str_as_one_item() -> None:
    pl = PromptList(["a"])
    pl += "bc"
    assert pl == ["a", "bc"]


def test_prompt_list_operations_leave_operands_alone() -> None:
    item = turn(H, "{q}</E>")
    pl = PromptList([item, "x</E>"])
    ice = PromptList([turn(B, "i")])
    snapshot, ice_snapshot = copy.deepcopy(pl), copy.deepcopy(ice)
    pl.format(q="v")
    pl.replace("</E>", "e")
    PromptList(["x</E>"]).replace("</E>", ice)[0]
    _ = pl + ice
    _ = ice + pl
    assert pl == snapshot and ice == ice_snapshot and item == turn(H, "{q}</E>")
    spliced = PromptList(["</E>"]).replace("</E>", ice)
    spliced[0]["prompt"] = "changed"  # type: ignore[index]
    assert ice == ice_snapshot


PL_ERRORS = [
    pytest.param(
        lambda: PromptList([turn(H, "</E>")]).replace("</E>", PromptList(["x"])),
        InputTypeError,
        "HUMAN",
        id="list-into-prompt",
    ),
    pytest.param(lambda: PromptList(["x"]).replace("", "y"), EvalTemplateError, "src", id="empty-src"),
    pytest.param(lambda: PromptList(["{a}"]).format(a=None), InputTypeError, "'a'", id="none-value"),
    pytest.param(lambda: PromptList(["{a}"]).format(a=[1]), InputTypeError, "'a'", id="list-value"),
]


@pytest.mark.parametrize(("call", "error", "named"), PL_ERRORS)
def test_prompt_list_errors(call: Any, error: type[PromptError], named: str) -> None:
    with pytest.raises(error, match=named.replace("[", r"\[")):
        call()


# -- PromptTemplate: the guide's examples, byte for byte ---------------------------------------------

ROUND_QA = [turn(H, "Question: {question}"), turn(B, "Answer: {answer}")]

GEN_CASES = [
    pytest.param(
        PromptTemplate("{anything}\nQuestion: {question}\nAnswer: {answer}", missing="keep"),
        {"question": "1+1=?", "answer": "2", "irrelevant_infos": "blabla"},
        "{anything}\nQuestion: 1+1=?\nAnswer: ",
        id="string-keeps-unknown-field",
    ),
    pytest.param(
        PromptTemplate("{anything}\nQuestion: {question}\nAnswer: {answer}"),
        {"anything": "blabla", "question": "1+1=?", "answer": "2"},
        "blabla\nQuestion: 1+1=?\nAnswer: ",
        id="string-aisbench",
    ),
    pytest.param(
        PromptTemplate("Solve the following questions.\n{question}\n{answer}"),
        EX3,
        "Solve the following questions.\n1+1=?\n",
        id="string-gen",
    ),
    pytest.param(
        PromptTemplate({"round": ROUND_QA}),
        EX3,
        [turn(H, "Question: 1+1=?"), turn(B, "Answer: ")],
        id="dialogue-single-round",
    ),
    pytest.param(
        PromptTemplate(
            {
                "round": [
                    turn(H, "Question: 2+2=?"),
                    turn(B, "Answer: 4"),
                    turn(H, "Question: 3+3=?"),
                    turn(B, "Answer: 6"),
                    *ROUND_QA,
                ]
            }
        ),
        EX3,
        [
            turn(H, "Question: 2+2=?"),
            turn(B, "Answer: 4"),
            turn(H, "Question: 3+3=?"),
            turn(B, "Answer: 6"),
            turn(H, "Question: 1+1=?"),
            turn(B, "Answer: "),
        ],
        id="dialogue-multi-round",
    ),
    pytest.param(
        PromptTemplate({"begin": [SYSTEM_TURN], "round": ROUND_QA}),
        EX3,
        [SYSTEM_TURN, turn(H, "Question: 1+1=?"), turn(B, "Answer: ")],
        id="dialogue-with-system",
    ),
    pytest.param(
        PromptTemplate({"A": "{q} A", "B": "{q} B"}),
        {"q": "Which?", "answer": "B"},
        "Which? A",
        id="labels-gen-uses-first",
    ),
]


@pytest.mark.parametrize(("template", "entry", "expected"), GEN_CASES)
def test_generate_item(template: PromptTemplate, entry: dict[str, Any], expected: Any) -> None:
    got = template.generate_item(entry, output_field="answer")
    if isinstance(got, PromptList):
        got = got.strip_sections()
    assert got == expected


def test_dialogue_prompt_list_carries_section_markers() -> None:
    got = PromptTemplate({"begin": "B{x}", "round": [turn(H, "{x}")], "end": ["E"]}).generate_item({"x": "1"})
    assert got == [
        {"section": "begin", "pos": "begin"},
        "B1",
        {"section": "begin", "pos": "end"},
        {"section": "round", "pos": "begin"},
        turn(H, "1"),
        {"section": "round", "pos": "end"},
        {"section": "end", "pos": "begin"},
        "E",
        {"section": "end", "pos": "end"},
    ]


ICE_T = PromptTemplate("{question}\n{answer}")
ICE_DIALOGUE_T = PromptTemplate({"round": [turn(H, "{question}"), turn(B, "{answer}")]})
FEW_SHOT_CASES = [
    pytest.param(
        ICE_T,
        PromptTemplate("Solve the following questions.\n</E>{question}\n{answer}", ice_token="</E>"),
        "Solve the following questions.\n2+2=?\n4\n3+3=?\n6\n1+1=?\n",
        id="string",
    ),
    pytest.param(
        ICE_DIALOGUE_T,
        PromptTemplate(
            {"begin": [SYSTEM_TURN, "</E>"], "round": [turn(H, "{question}"), turn(B, "{answer}")]},
            ice_token="</E>",
        ),
        [
            SYSTEM_TURN,
            turn(H, "2+2=?"),
            turn(B, "4"),
            turn(H, "3+3=?"),
            turn(B, "6"),
            turn(H, "1+1=?"),
            turn(B, ""),
        ],
        id="dialogue",
    ),
    pytest.param(
        PromptTemplate("</E>Q: {question}\nA: {answer}", ice_token="</E>"),
        PromptTemplate("</E>Q: {question}\nA: {answer}", ice_token="</E>"),
        "Q: 2+2=?\nA: 4\nQ: 3+3=?\nA: 6\nQ: 1+1=?\nA: ",
        id="abbreviated-ice-template-as-prompt-template",
    ),
]


@pytest.mark.parametrize(("ice_template", "prompt_template", "expected"), FEW_SHOT_CASES)
def test_few_shot(ice_template: PromptTemplate, prompt_template: PromptTemplate, expected: Any) -> None:
    ice = ice_template.generate_ice([EX1, EX2])
    got = prompt_template.generate_item(EX3, output_field="answer", ice_field_replace_token=ice)
    assert (got.strip_sections() if isinstance(got, PromptList) else got) == expected


def test_ice_items_are_inside_ice_sections_without_begin() -> None:
    t = PromptTemplate({"begin": ["never"], "round": [turn(H, "{question}"), turn(B, "{answer}")]})
    assert t.generate_ice_item(EX1) == [
        {"section": "ice", "pos": "begin"},
        turn(H, "2+2=?"),
        turn(B, "4"),
        {"section": "ice", "pos": "end"},
    ]


def test_zero_shot_blanks_the_ice_token() -> None:
    t = PromptTemplate("</E>Q: {question}\nA: {answer}", ice_token="</E>")
    assert t.generate_item(EX3, output_field="answer") == "Q: 1+1=?\nA: "
    assert ICE_T.generate_ice([]) == ""


PPL_STRING = PromptTemplate(
    {
        "A": "Question: Which is true?\nA. {A}\nB. {B}\nC. {C}\nAnswer: A",
        "B": "Question: Which is true?\nA. {A}\nB. {B}\nC. {C}\nAnswer: B",
        "C": "Question: Which is true?\nA. {A}\nB. {B}\nC. {C}\nAnswer: C",
        "UNK": "Question: Which is true?\nA. {A}\nB. {B}\nC. {C}\nAnswer: None of them is true.",
    }
)
PPL_DIALOGUE = PromptTemplate(
    {
        label: {"round": [turn(H, "Question: Which is true?\nA. {A}\nB. {B}\nC. {C}"), turn(B, f"Answer: {ans}")]}
        for label, ans in [("A", "A"), ("B", "B"), ("C", "C"), ("UNK", "None of them is true.")]
    }
)
OPTIONS = {"A": "x>1", "B": "{B}", "C": "1<2", "answer": "C"}
PPL_CASES = [
    pytest.param(PPL_STRING, "A", "Question: Which is true?\nA. x>1\nB. {B}\nC. 1<2\nAnswer: A", id="string-A"),
    pytest.param(
        PPL_STRING,
        "UNK",
        "Question: Which is true?\nA. x>1\nB. {B}\nC. 1<2\nAnswer: None of them is true.",
        id="string-UNK",
    ),
    pytest.param(
        PPL_DIALOGUE,
        "C",
        [turn(H, "Question: Which is true?\nA. x>1\nB. {B}\nC. 1<2"), turn(B, "Answer: C")],
        id="dialogue-C",
    ),
]


@pytest.mark.parametrize(("template", "label", "expected"), PPL_CASES)
def test_label_prompts(template: PromptTemplate, label: str, expected: Any) -> None:
    got = template.generate_label_prompt_item(OPTIONS, "", label)
    assert (got.strip_sections() if isinstance(got, PromptList) else got) == expected
    assert template.labels == ("A", "B", "C", "UNK")


def test_label_ice_uses_the_examples_own_label() -> None:
    t = PromptTemplate({0: "{text} -> negative", 1: "{text} -> positive"})
    ice = t.generate_ice([{"text": "bad", "label": 0}, {"text": "good", "label": 1}], label_field="label")
    assert ice == "bad -> negative\ngood -> positive\n"


def test_sep_token_is_removed_unless_kept() -> None:
    t = PromptTemplate({"A": "</E>{q}<SEP> A"}, ice_token="</E>", sep_token="<SEP>")
    entry = {"q": "x<SEP>"}
    assert t.generate_label_prompt_item(entry, "ice|", "A") == "ice|x<SEP> A"
    assert t.generate_label_prompt_item(entry, "ice|", "A", remain_sep=True) == "ice|x<SEP><SEP> A"
    assert t.generate_item(entry) == "x<SEP> A"


def test_one_pass_ice_and_fields() -> None:
    """The in-context examples and the entry's values are never filled again (OpenCompass fills twice)."""
    ice_t = PromptTemplate("{question}={answer}")
    t = PromptTemplate("</E>{question}=", ice_token="</E>")
    ice = ice_t.generate_ice([{"question": "{question}", "answer": "</E>"}])
    assert ice == "{question}=</E>\n"
    got = t.generate_label_prompt_item({"question": "{answer}</E>"}, ice, None)
    assert got == "{question}=</E>\n{answer}</E>="


# -- errors -----------------------------------------------------------------------------------------

TEMPLATE_ERRORS = [
    pytest.param(lambda: PromptTemplate(3), EvalTemplateError, "template", id="not-str-or-dict"),  # type: ignore[arg-type]
    pytest.param(lambda: PromptTemplate({}), EvalTemplateError, "empty", id="empty-dict"),
    pytest.param(lambda: PromptTemplate({"begin": []}), EvalTemplateError, "'round'", id="no-round"),
    pytest.param(lambda: PromptTemplate({"round": [], "A": "x"}), EvalTemplateError, "round", id="mixed-keys"),
    pytest.param(
        lambda: PromptTemplate({"round": ["x"]}), EvalTemplateError, r"template\['round'\]\[0\]", id="string-in-round"
    ),
    pytest.param(
        lambda: PromptTemplate({"round": [{"prompt": "x"}]}), EvalTemplateError, "'role'", id="turn-without-role"
    ),
    pytest.param(
        lambda: PromptTemplate({"round": [{"role": H, "promt": "x"}]}), EvalTemplateError, "promt", id="misspelt-key"
    ),
    pytest.param(lambda: PromptTemplate("{q}", ice_token="</E>"), EvalTemplateError, "</E>", id="ice-token-absent"),
    pytest.param(lambda: PromptTemplate("{q}", ice_token=""), EvalTemplateError, "ice_token", id="empty-ice-token"),
    pytest.param(
        lambda: PromptTemplate("{q}", missing="skip"),  # type: ignore[arg-type]
        EvalTemplateError,
        "missing",
        id="bad-missing",
    ),
    pytest.param(
        lambda: PromptTemplate("Q: {question}").generate_item({"q": "x"}),
        MissingSlotError,
        "'question'",
        id="missing-field",
    ),
    pytest.param(
        lambda: PromptTemplate({"round": [turn(H, "{question}")]}).generate_item({}),
        MissingSlotError,
        r"template\['round'\]\[0\]\['prompt'\]",
        id="missing-field-names-the-turn",
    ),
    pytest.param(lambda: PromptTemplate("{q}").generate_item({"q": None}), InputTypeError, "'q'", id="none-value"),
    pytest.param(
        lambda: PromptTemplate("{q}").generate_item(["q"]),  # type: ignore[arg-type]
        InputTypeError,
        "entry",
        id="entry-not-dict",
    ),
    pytest.param(
        lambda: PPL_STRING.generate_label_prompt_item(OPTIONS, "", "D"), UnknownLabelError, "'D'", id="unknown-label"
    ),
    pytest.param(lambda: PPL_STRING.generate_ice([OPTIONS]), EvalTemplateError, "label_field", id="ice-needs-labels"),
    pytest.param(
        lambda: PromptTemplate({"round": [turn(H, "</E>{q}")]}, ice_token="</E>").generate_item(
            {"q": "x"}, ice_field_replace_token=PromptList([turn(B, "y")])
        ),
        InputTypeError,
        "ice token",
        id="ice-list-into-turn-prompt",
    ),
    pytest.param(
        lambda: PromptTemplate("</E>{q}", ice_token="</E>").generate_item(
            {"q": "x"}, ice_field_replace_token=PromptList(["y"])
        ),
        InputTypeError,
        "ice",
        id="ice-list-into-string-template",
    ),
]


@pytest.mark.parametrize(("call", "error", "named"), TEMPLATE_ERRORS)
def test_template_errors(call: Any, error: type[PromptError], named: str) -> None:
    with pytest.raises(error, match=named):
        call()


def test_missing_slot_error_is_also_a_key_error() -> None:
    with pytest.raises(KeyError):
        PromptTemplate("{a}").generate_item({})


# -- no mutation ------------------------------------------------------------------------------------


def test_templates_and_entries_are_never_changed() -> None:
    raw = {"begin": [dict(SYSTEM_TURN), "</E>"], "round": [turn(H, "{question}"), turn(B, "{answer}")]}
    raw_copy = copy.deepcopy(raw)
    t = PromptTemplate(raw, ice_token="</E>")
    entries = [copy.deepcopy(e) for e in (EX1, EX2, EX3)]
    ice = ICE_DIALOGUE_T.generate_ice(entries[:2])
    ice_copy = copy.deepcopy(ice)
    out = t.generate_item(entries[2], output_field="answer", ice_field_replace_token=ice)
    t.generate_label_prompt_item(entries[2], ice, None)
    assert raw == raw_copy and entries == [EX1, EX2, EX3] and ice == ice_copy
    out[4]["prompt"] = "changed"  # type: ignore[index]
    assert ice == ice_copy
    raw["round"][0]["prompt"] = "later edit"  # type: ignore[index]
    again = t.generate_item(EX3, output_field="answer")
    assert isinstance(again, PromptList) and turn(H, "1+1=?") in again
