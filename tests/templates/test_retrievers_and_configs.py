"""Retrievers (which examples, what text) and configs pasted as written (type= keys)."""

from __future__ import annotations

from typing import Any

import pytest

from prompter.errors import EvalTemplateError, UnsupportedContentError
from prompter.templates import MetaTemplate, PromptList, PromptTemplate
from prompter.templates.config import build, build_meta
from prompter.templates.retrievers import (
    _MT19937,
    BaseRetriever,
    BM25Retriever,
    FixKRetriever,
    RandomRetriever,
    ZeroRetriever,
    legacy_choice,
)

INDEX = [
    {"q": "the cat sat on the mat", "a": "cat"},
    {"q": "dogs bark at night", "a": "dog"},
    {"q": "a fish swims", "a": "fish"},
    {"q": "cats chase mice", "a": "cat"},
]


@pytest.mark.parametrize(("seed", "n", "k"), [(43, 10, 3), (0, 100, 5), (7, 1, 1), (2**32 - 1, 50, 50)])
def test_random_retriever_indices_equal_numpys_legacy_seeded_choice(seed: int, n: int, k: int) -> None:
    np = pytest.importorskip("numpy")
    np.random.seed(seed)
    expected = [np.random.choice(n, k, replace=False).tolist() for _ in range(4)]
    state = _MT19937(seed)
    assert [legacy_choice(n, k, state) for _ in range(4)] == expected


def test_random_retriever_is_seeded_and_distinct() -> None:
    r = RandomRetriever(INDEX, ice_num=2, seed=1)
    first = r.retrieve([{}] * 5)
    assert first == RandomRetriever(INDEX, ice_num=2, seed=1).retrieve([{}] * 5)
    assert all(len(set(ids)) == 2 for ids in first)


def test_bm25_retriever_picks_the_most_similar_examples() -> None:
    r = BM25Retriever(INDEX, ice_num=2, output_column="a")
    assert r.retrieve([{"q": "the cat and the mat", "a": "?"}])[0][0] == 0
    assert r.retrieve([{"q": "dogs bark", "a": "?"}])[0][0] == 1


def test_end_token_is_written_even_with_no_examples_and_zero_retriever_defaults_to_none() -> None:
    assert BaseRetriever(INDEX).generate_ice([], None) == "\n"
    assert ZeroRetriever(INDEX).generate_ice([], None) == ""
    ice_t = PromptTemplate("{q} -> {a}")
    r = FixKRetriever(INDEX, fix_id_list=[0, 1], ice_separator=" | ", ice_eos_token=" || ", output_column="a")
    assert r.generate_ice([0, 1], ice_t) == "the cat sat on the mat -> cat | dogs bark at night -> dog || "


def test_dialogue_examples_join_without_separator_and_splice_into_the_prompt() -> None:
    ice_t = PromptTemplate(dict(round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="{a}")]))
    prompt_t = PromptTemplate(
        dict(begin="</E>", round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="{a}")]), ice_token="</E>"
    )
    r = FixKRetriever(INDEX, fix_id_list=[0], output_column="a")
    ice = r.generate_ice([0], ice_t)
    assert isinstance(ice, PromptList)
    prompt = r.generate_prompt({"q": "fish?", "a": "fish"}, ice, ice_template=ice_t, prompt_template=prompt_t)
    turns = [i for i in prompt if isinstance(i, dict) and "role" in i]
    assert [t.get("prompt") for t in turns] == ["the cat sat on the mat", "cat", "fish?", ""]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: FixKRetriever(INDEX, fix_id_list=[9]), "out of range"),
        (lambda: BaseRetriever(INDEX).generate_ice([0], None), "no ice_template"),
        (
            lambda: BaseRetriever(INDEX).generate_prompt(
                {}, "", ice_template=PromptTemplate("{q}"), prompt_template=PromptTemplate("{q}")
            ),
            "no ice_token",
        ),
        (lambda: BaseRetriever(INDEX).generate_prompt({}, "", ice_template=PromptTemplate("{q}")), "no ice_token"),
        (lambda: PromptTemplate("Q: {q}", ice_token="</E>"), "does not occur"),
        (lambda: PromptTemplate("Q: {q}", ice_token="</E>", compat="opencompass"), "does not occur"),
        (lambda: RandomRetriever(INDEX, ice_num=9), "more than"),
    ],
    ids=[
        "fixk-range",
        "ice-without-template",
        "prompt-template-without-ice-token",
        "ice-template-alone",
        "str",
        "compat",
        "random",
    ],
)
def test_ice_token_and_index_mistakes_are_typed_errors(call: Any, match: str) -> None:
    with pytest.raises(EvalTemplateError, match=match):
        call()


def test_a_config_block_pasted_as_keyword_arguments_builds_the_template() -> None:
    cfg = dict(type=PromptTemplate, template="Q: {q}\nA: {a}")
    assert PromptTemplate(**cfg).generate_item({"q": "1", "a": "2"}, output_field="a") == "Q: 1\nA: "
    with pytest.raises(EvalTemplateError, match="ZeroRetriever"):
        PromptTemplate(**dict(type="ZeroRetriever", template="x"))


@pytest.mark.parametrize(
    "type_", [PromptTemplate, "PromptTemplate", "opencompass.openicl.icl_prompt_template.PromptTemplate"]
)
def test_build_reads_type_as_a_class_or_a_dotted_name(type_: Any) -> None:
    t = build(dict(type=type_, template="</E>{q}", ice_token="</E>"), compat="opencompass")
    assert isinstance(t, PromptTemplate) and t.compat == "opencompass"


def test_build_never_imports_what_a_config_names() -> None:
    with pytest.raises(EvalTemplateError, match="unknown type 'system'"):
        build(dict(type="os.system", command="echo hi"))
    retriever = build(dict(type="icl_retriever.FixKRetriever", fix_id_list=[1]), index=INDEX, output_column="a")
    assert retriever.retrieve([{}, {}]) == [[1], [1]]


def test_openai_messages_pass_through_parse_api_and_are_refused_by_parse() -> None:
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}]
    api = MetaTemplate(round=[dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)])
    assert api.parse_api(messages) == messages
    assert MetaTemplate().parse_api(messages) == messages
    with pytest.raises(UnsupportedContentError, match="messages"):
        MetaTemplate().parse(messages)
    prefixed = build_meta([{"role": "system", "content": "Be brief. "}])
    assert prefixed.parse_api(messages)[0] == {"role": "system", "content": "Be brief. S"}


def test_an_extra_api_role_tool_is_accepted() -> None:
    meta = MetaTemplate(
        round=[dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)],
        reserved_roles=[dict(role="TOOL", api_role="TOOL")],
    )
    prompt = PromptList([dict(role="TOOL", prompt="42"), dict(role="HUMAN", prompt="q")])
    assert meta.parse_api(prompt) == [{"role": "TOOL", "prompt": "42"}, {"role": "HUMAN", "prompt": "q"}]


def test_default_mode_keeps_one_pass_filling_while_compat_fills_again() -> None:
    entry = {"q": "{a}", "a": "2"}
    assert PromptTemplate("{q}={a}").generate_item(entry) == "{a}=2"
    assert PromptTemplate("{q}={a}", compat="opencompass").generate_item(entry) == "2=2"


def test_a_misspelled_meta_template_key_names_the_key_it_resembles() -> None:
    with pytest.raises(EvalTemplateError, match=r"\['rounds'\] \(did you mean 'round' for 'rounds'\?\)"):
        build_meta({"rounds": [{"role": "HUMAN"}]})
