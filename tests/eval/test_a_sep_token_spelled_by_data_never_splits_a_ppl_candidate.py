"""Threat: a dataset value (or an in-context example) that spells the template's ``sep_token`` moved the
point where a PPL candidate is split into context and scored continuation, and lost its own ``</S>``:
``q="a</S>b"`` scored ``"b\\nA: yes"`` after ``"Q: a"`` instead of ``"yes"`` after ``"Q: a</S>b\\nA: "``.
In the default mode data is data: only the template's own ``sep_token`` splits. Compat mode with
``normalizing_str`` keeps OpenCompass's split at the first ``sep_token`` of the text, as upstream does."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules.eval import plan

LABELS = {"yes": "Q: {q}\nA: </S>yes", "no": "Q: {q}\nA: </S>no"}
DIALOGUE = {
    label: dict(begin="</E>", round=[dict(role="HUMAN", prompt="Q: {q}"), dict(role="BOT", prompt=f"</S>{label}")])
    for label in ("yes", "no")
}


def _dataset(rows: list[dict[str, str]], template: Any, **infer: Any) -> dict[str, Any]:
    prompt = dict(type="PromptTemplate", template=template, sep_token="</S>", **infer.pop("prompt", {}))
    return dict(
        path=rows,
        reader_cfg=dict(input_columns=["q"], output_column="l"),
        infer_cfg=dict(prompt_template=prompt, inferencer=dict(type="PPLInferencer", **infer.pop("ppl", {})), **infer),
    )


@pytest.mark.parametrize("model", [{}, {"type": "TrainableModule"}], ids=["text", "local-model"])
def test_a_value_spelling_the_sep_token_stays_in_the_context(model: dict[str, Any]) -> None:
    job = plan(_dataset([{"q": "a</S>b", "l": "yes"}], LABELS), model).jobs()[0]
    assert job["pairs"] == [("Q: a</S>b\nA: ", "yes"), ("Q: a</S>b\nA: ", "no")]
    assert job["origin_prompt"] == ["Q: a</S>b\nA: yes", "Q: a</S>b\nA: no"]


def test_an_in_context_example_spelling_the_sep_token_stays_in_the_context() -> None:
    rows = [{"q": "x</S>y", "l": "no"}, {"q": "1+1=2?", "l": "yes"}]
    meta = dict(round=[dict(role="HUMAN", begin="<H>", end="\n"), dict(role="BOT", begin="<B>", end="\n", generate=True)])
    dataset = _dataset(
        rows,
        DIALOGUE,
        prompt=dict(ice_token="</E>"),
        ice_template=dict(type="PromptTemplate", template=DIALOGUE, sep_token="</S>"),
        retriever=dict(type="FixKRetriever", fix_id_list=[0]),
    )
    job = plan(dataset, dict(meta_template=meta)).jobs()[1]
    assert job["pairs"] == [
        ("<H>Q: x</S>y\n<B>no\n<H>Q: 1+1=2?\n<B>", "yes\n"),
        ("<H>Q: x</S>y\n<B>no\n<H>Q: 1+1=2?\n<B>", "no\n"),
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(["</S>", "a", " ", "\n", "{", "}", "</E>", "<", "S>"]), max_size=8).map("".join))
def test_any_value_stays_whole_in_the_context_and_never_in_the_scored_answer(value: str) -> None:
    job = plan(_dataset([{"q": value, "l": "no"}], LABELS), {}).jobs()[0]
    assert job["pairs"] == [(f"Q: {value}\nA: ", "yes"), (f"Q: {value}\nA: ", "no")]


def test_compat_mode_with_normalizing_str_splits_at_the_first_sep_token_as_opencompass() -> None:
    dataset = _dataset([{"q": "a</S>b", "l": "yes"}], LABELS, ppl=dict(normalizing_str="A: "))
    job = plan(dataset, {}, compat="opencompass").jobs()[0]
    assert job["pairs"][0] == ("Q: a", "b\nA: yes")  # upstream's prompt.find(sep_token)
