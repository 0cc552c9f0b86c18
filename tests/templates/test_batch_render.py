"""The batch path (render_prompts) gives every sample the text, or the error, of the per-sample path.

Rows, index examples and templates are generated with the characters that make filling
subtle (braces, field names inside values, the ice token, empty values, non-str values),
in every compat mode, with and without meta-template rounds, for FixK, Zero and Random.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompter.templates import MetaTemplate, PromptTemplate
from prompter.templates.batch import render_label_prompts, render_one, render_prompts
from prompter.templates.retrievers import BaseRetriever, FixKRetriever, RandomRetriever, ZeroRetriever

FIELDS = ["q", "a", "c"]
TEXT = st.lists(st.sampled_from([*"xy {}\n", "{q}", "{a}", "{c}", "</E>", "{{q}}"]), max_size=5).map("".join)
VALUE = st.one_of(TEXT, TEXT, st.integers(-5, 5), st.none(), st.lists(st.integers(0, 2), max_size=2))
ROW = st.one_of(
    st.dictionaries(st.sampled_from(FIELDS), VALUE, max_size=3),
    st.fixed_dictionaries({"q": TEXT, "a": TEXT, "c": TEXT}),  # complete rows: the default mode's plans are used
)
COMPAT = st.sampled_from([None, "opencompass", "aisbench"])

STRING_TEMPLATES = ["Q: {q}\nA: {a}", "{q}{c}-{a}", "", "{a}"]
DIALOGUES: list[dict[str, Any]] = [
    {"round": [{"role": "HUMAN", "prompt": "Q: {q}"}, {"role": "BOT", "prompt": "A: {a}"}]},
    {"round": [{"role": "HUMAN", "prompt": "{q}"}, {"role": "BOT", "prompt": "{a}"}]},
    {"round": [{"role": "HUMAN", "prompt": "{c}{q}"}, {"role": "BOT", "prompt": ""}]},
]
METAS: list[dict[str, Any]] = [
    {},
    {
        "round": [
            {"role": "HUMAN", "begin": "<u>", "end": "</u>\n"},
            {"role": "BOT", "begin": "<b>", "end": "</b>\n", "generate": True},
        ],
        "reserved_roles": [{"role": "SYSTEM", "begin": "<s>", "end": "</s>\n"}],
    },
    {"round": [{"role": "HUMAN", "begin": "H:"}, {"role": "BOT", "begin": "B:", "generate": True}], "begin": "^"},
]


def _prompt_dialogue(rounds: dict[str, Any], where: str) -> dict[str, Any]:
    begin: list[Any] = [{"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "Sys {c}"}]
    if where == "begin":
        begin.append("</E>")
        return {"begin": begin, **rounds}
    return {"begin": [*begin, "x{q}"], "round": [{"role": "HUMAN", "prompt": "pre"}, *rounds["round"]], "end": ["</E>"]}


@st.composite
def configs(draw: st.DrawFn) -> tuple[BaseRetriever, PromptTemplate, PromptTemplate, MetaTemplate, list[Any]]:
    compat = draw(COMPAT)
    index = draw(st.lists(ROW, min_size=1, max_size=4))
    tests = draw(st.lists(ROW, min_size=0, max_size=8))
    if draw(st.booleans()):
        tests = tests + tests  # repeated rows and choices: the plans are used
    output = draw(st.sampled_from(["a", "q", None]))
    kind = draw(st.sampled_from(["fixk", "zero", "random"]))
    if draw(st.booleans()):
        ice_t = PromptTemplate(draw(st.sampled_from(STRING_TEMPLATES)), compat=compat)
        prompt_t = PromptTemplate(
            draw(st.sampled_from(["</E>Q: {q}\nA: {a}", "{c}</E>{q}", "</E>"])), ice_token="</E>", compat=compat
        )
    else:
        ice_t = PromptTemplate(draw(st.sampled_from(DIALOGUES)), compat=compat)
        rounds = draw(st.sampled_from(DIALOGUES))
        prompt_t = PromptTemplate(
            _prompt_dialogue(rounds, draw(st.sampled_from(["begin", "end"]))), ice_token="</E>", compat=compat
        )
    options: dict[str, Any] = {"output_column": output, "compat": compat}
    retriever: BaseRetriever
    if kind == "fixk":
        ids = draw(st.lists(st.integers(0, len(index) - 1), max_size=3))
        retriever = FixKRetriever(index, fix_id_list=ids, **options)
    elif kind == "zero":
        retriever = ZeroRetriever(index, **options)
    else:
        retriever = RandomRetriever(index, ice_num=min(len(index), 1), seed=draw(st.integers(0, 3)), **options)
    meta = MetaTemplate(**draw(st.sampled_from(METAS)), compat=compat)
    return retriever, ice_t, prompt_t, meta, tests


def _per_sample(
    retriever: BaseRetriever, ice_t: PromptTemplate, prompt_t: PromptTemplate, meta: MetaTemplate, tests: list[Any]
) -> list[str] | type[BaseException]:
    out = []
    for entry, ids in zip(tests, retriever.retrieve(tests), strict=True):
        try:
            out.append(render_one(retriever, entry, ids, meta, ice_template=ice_t, prompt_template=prompt_t))
        except Exception as exc:  # noqa: BLE001 - the batch must raise the same
            return type(exc)
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_batch_render_equals_per_sample_render_in_every_compat_mode(
    config: tuple[BaseRetriever, PromptTemplate, PromptTemplate, MetaTemplate, list[Any]],
) -> None:
    retriever, ice_t, prompt_t, meta, tests = config
    expected = _per_sample(retriever, ice_t, prompt_t, meta, tests)
    try:
        got: list[str] | type[BaseException] = render_prompts(
            retriever, tests, meta, ice_template=ice_t, prompt_template=prompt_t
        )
    except Exception as exc:  # noqa: BLE001
        got = type(exc)
    assert got == expected


def test_batch_render_fills_test_fields_inside_the_examples_as_opencompass_does() -> None:
    # upstream fills the in-context examples with the test entry's fields; the plan must keep that quirk
    index = [{"q": "ex", "a": "{c}"}]
    tests = [{"q": "first", "a": "X", "c": "Z"}, {"q": "second {c}", "a": "Y", "c": 7}, {"q": "third", "a": ""}]
    meta = MetaTemplate(round=[{"role": "HUMAN"}, {"role": "BOT", "generate": True}], compat="opencompass")
    ice_t = PromptTemplate("{q}->{a}", compat="opencompass")
    prompt_t = PromptTemplate("</E>{q}->{a}", ice_token="</E>", compat="opencompass")
    r = FixKRetriever(index, fix_id_list=[0], output_column="a", compat="opencompass")
    got = render_prompts(r, tests, meta, ice_template=ice_t, prompt_template=prompt_t)
    assert got == ["ex->Z\nfirst->", "ex->7\nsecond 7->", "ex->{c}\nthird->"]
    assert got == [render_one(r, t, [0], meta, ice_template=ice_t, prompt_template=prompt_t) for t in tests]


def test_batch_render_leaves_the_callers_rows_unchanged() -> None:
    tests = [{"q": "a", "a": "b"}, {"q": "c", "a": "d"}]
    before = [dict(t) for t in tests]
    r = FixKRetriever([{"q": "e", "a": "f"}], fix_id_list=[0], output_column="a")
    render_prompts(
        r,
        tests,
        MetaTemplate(),
        ice_template=PromptTemplate("{q}"),
        prompt_template=PromptTemplate("</E>{q}", ice_token="</E>"),
    )
    assert tests == before


def test_batch_render_does_not_plan_a_text_that_fills_to_empty_which_a_plain_meta_template_drops() -> None:
    # without rounds the meta template joins the non-empty texts with "\n": an empty one changes the joins
    for compat in (None, "opencompass", "aisbench"):
        turns = [{"role": "HUMAN", "prompt": "{q}"}, {"role": "BOT", "prompt": "{a}"}]
        ice_t = PromptTemplate({"round": turns}, compat=compat)  # type: ignore[arg-type]
        prompt_t = PromptTemplate(
            {"begin": ["</E>", {"role": "HUMAN", "prompt": "s"}], "round": turns},
            ice_token="</E>",
            compat=compat,  # type: ignore[arg-type]
        )
        r = ZeroRetriever([], output_column="a", compat=compat)  # type: ignore[arg-type]
        meta = MetaTemplate(compat=compat)  # type: ignore[arg-type]
        tests = [{"q": "x", "a": "1"}, {"q": "", "a": "2"}, {"q": "y", "a": "3"}]
        expected = [render_one(r, t, [], meta, ice_template=ice_t, prompt_template=prompt_t) for t in tests]
        assert render_prompts(r, tests, meta, ice_template=ice_t, prompt_template=prompt_t) == expected


@st.composite
def ppl_configs(draw: st.DrawFn) -> tuple[BaseRetriever, PromptTemplate, PromptTemplate, MetaTemplate, list[Any]]:
    compat = draw(COMPAT)
    index = draw(st.lists(ROW, min_size=1, max_size=4))
    tests = draw(st.lists(ROW, max_size=6))
    tests = tests + tests
    if draw(st.booleans()):
        ice_t = PromptTemplate({"A": "{q} A{c}", "B": "{q} B"}, compat=compat)
        prompt_t = PromptTemplate(
            {"A": "</E>{q} <S>A{c}", "B": "</E>{q}<S> B{a}"}, ice_token="</E>", sep_token="<S>", compat=compat
        )
    else:
        ice_t = PromptTemplate({"A": DIALOGUES[0], "B": DIALOGUES[2]}, compat=compat)
        prompt_t = PromptTemplate(
            {"A": _prompt_dialogue(DIALOGUES[0], "begin"), "B": _prompt_dialogue(DIALOGUES[1], "end")},
            ice_token="</E>",
            compat=compat,
        )
    retriever = FixKRetriever(
        index, fix_id_list=draw(st.lists(st.integers(0, len(index) - 1), max_size=2)), output_column="a", compat=compat
    )
    meta = MetaTemplate(**draw(st.sampled_from(METAS)), compat=compat)
    return retriever, ice_t, prompt_t, meta, tests


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ppl_configs(), st.sampled_from(["A", "B", "C"]), st.booleans())
def test_batch_label_prompts_equal_per_sample_label_prompts_in_every_compat_mode(
    config: tuple[BaseRetriever, PromptTemplate, PromptTemplate, MetaTemplate, list[Any]], label: str, keep: bool
) -> None:
    retriever, ice_t, prompt_t, meta, tests = config
    expected: list[str] | type[BaseException] = []
    for entry, ids in zip(tests, retriever.retrieve(tests), strict=True):
        try:
            ice = retriever.generate_ice(ids, ice_t)
            prompt = retriever.generate_label_prompt(
                entry, ice, label, ice_template=ice_t, prompt_template=prompt_t, remain_sep=keep
            )
            expected.append(meta.parse(prompt, mode="ppl"))  # type: ignore[union-attr]
        except Exception as exc:  # noqa: BLE001 - the batch must raise the same
            expected = type(exc)
            break
    try:
        got: list[str] | type[BaseException] = render_label_prompts(
            retriever, tests, meta, label, ice_template=ice_t, prompt_template=prompt_t, remain_sep=keep
        )
    except Exception as exc:  # noqa: BLE001
        got = type(exc)
    assert got == expected
