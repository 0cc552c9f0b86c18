"""docs/coming-from-opencompass.md: the sentences that claim a behaviour, each checked on the real parts."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from prompter import ModelFormat
from prompter.errors import EvalTemplateError
from prompter.templates import MetaTemplate, PromptList, PromptTemplate

META = dict(round=[
    dict(role="HUMAN", begin="<u>", end="</u>"),
    dict(role="SYSTEM", begin="<s>", end="</s>"),
    dict(role="BOT", begin="<a>", end="</a>", generate=True),
])


def test_a_role_the_round_lacks_is_not_written_as_an_empty_turn() -> None:
    template = PromptTemplate(dict(round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="{a}")]))
    meta = MetaTemplate(**META)  # type: ignore[arg-type]
    assert meta.parse(template.generate_item({"q": "x", "a": "y"}, output_field="a"), mode="gen") == "<u>x</u><a>"
    assert meta.parse(template.generate_item({"q": "x", "a": "y"}), mode="ppl") == "<u>x</u><a>y</a>"


def test_strings_are_written_where_they_stand_and_a_list_without_sections_is_one_round() -> None:
    meta = MetaTemplate(**META)  # type: ignore[arg-type]
    inside = PromptList([dict(section="round", pos="begin"), "STR", dict(role="HUMAN", prompt="hi"),
                         dict(section="round", pos="end")])
    assert meta.parse(inside, mode="gen") == "STR<u>hi</u><a>"
    assert meta.parse(PromptList(["A", dict(role="HUMAN", prompt="hi")]), mode="gen") == "A<u>hi</u><a>"


@pytest.mark.parametrize(("build", "named"), [
    (lambda: PromptTemplate(dict(round=[dict(role="HUMAN", promt="{q}")])), "promt"),
    (lambda: MetaTemplate(round=[dict(role="HUMAN", begn="<u>", end="</u>")]), "begn"),
], ids=["dataset-turn", "meta-role"])
def test_a_misspelt_key_is_an_eval_template_error_naming_it(build: Callable[[], object], named: str) -> None:
    with pytest.raises(EvalTemplateError, match=named):
        build()


@pytest.mark.parametrize("where", ["round", "begin"])
def test_token_ids_in_a_meta_template_are_refused_naming_the_remedy(where: str) -> None:
    role = dict(role="HUMAN", begin="<u>", end="</u>")
    kwargs = {"round": [{**role, "begin": [1, 2]}]} if where == "round" else {"round": [role], "begin": [1, 2]}
    with pytest.raises(EvalTemplateError, match="tokenizer"):
        MetaTemplate(**kwargs)


@pytest.mark.parametrize(("option", "value"), [("compat", "opencompas"), ("missing", "kep")])
def test_a_misspelt_mode_is_an_eval_template_error_listing_the_choices(option: str, value: str) -> None:
    with pytest.raises(EvalTemplateError, match=f"{option}: expected .*got '{value}'"):
        PromptTemplate("Q: {q}", **{option: value})  # type: ignore[arg-type]


def test_a_meta_template_goes_to_a_model_format_and_back() -> None:
    qwen = ModelFormat.get("qwen2.5")
    fmt = MetaTemplate.from_model_format(qwen).to_model_format()
    assert (fmt.soh, fmt.eoh, fmt.soa, fmt.eoa) == (qwen.soh, qwen.eoh, qwen.soa, qwen.eoa)
