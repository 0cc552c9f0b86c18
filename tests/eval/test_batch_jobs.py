"""The inferencers' batch jobs (what Plan.jobs runs) equal their per-sample jobs, text for text."""

from __future__ import annotations

from typing import Any

import pytest

from modules.eval.inferencers import GenInferencer, PPLInferencer, Prompts
from prompter.templates import MetaTemplate, PromptTemplate
from prompter.templates.retrievers import FixKRetriever, RandomRetriever

INDEX = [{"q": f"{i}+{i}={{a}}?", "a": str(2 * i), "lab": "xy"[i % 2]} for i in range(6)]
TESTS: list[dict[str, Any]] = [{"q": f"{i}*2 {{a}}", "a": str(2 * i), "c": i} for i in range(12)] + [
    {"q": "", "a": "0", "c": None}
]
META = {
    "round": [
        {"role": "HUMAN", "begin": "<u>", "end": "</u>\n"},
        {"role": "BOT", "begin": "<b>", "end": "</b>\n", "generate": True},
    ]
}
DIALOGUE = {"round": [{"role": "HUMAN", "prompt": "Q: {q}"}, {"role": "BOT", "prompt": "A: {a}"}]}


def _prompts(compat: Any, retriever: str, ppl: bool) -> Prompts:
    column = "lab" if ppl else "a"
    r = (
        FixKRetriever(INDEX, fix_id_list=[0, 3], output_column=column, compat=compat)
        if retriever == "fixk"
        else RandomRetriever(INDEX, ice_num=1, seed=1, output_column=column, compat=compat)
    )
    if ppl:
        ice_t = PromptTemplate({"x": "{q} x", "y": "{q} y"}, compat=compat)
        prompt_t = PromptTemplate(
            {"x": "</E>{q}<S> x", "y": "</E>{q}<S> y {c}"}, ice_token="</E>", sep_token="<S>", compat=compat
        )
    else:
        ice_t = PromptTemplate(DIALOGUE, compat=compat)
        prompt_t = PromptTemplate({"begin": ["</E>"], **DIALOGUE}, ice_token="</E>", compat=compat)
    return Prompts(r, MetaTemplate(**META, compat=compat), ice_t, prompt_t)  # type: ignore[arg-type]


@pytest.mark.parametrize("compat", [None, "opencompass", "aisbench"])
@pytest.mark.parametrize("retriever", ["fixk", "random"])
def test_gen_batch_jobs_equal_per_sample_jobs(compat: Any, retriever: str) -> None:
    prompts = _prompts(compat, retriever, ppl=False)
    tests = TESTS[:-1] if compat is None else TESTS  # the default mode refuses None values
    ids = prompts.retriever.retrieve(tests)
    inferencer = GenInferencer()
    expected = [inferencer.job(prompts, i, e, d) for i, (e, d) in enumerate(zip(tests, ids, strict=True))]
    assert inferencer.jobs(prompts, tests, ids) == expected


@pytest.mark.parametrize("compat", [None, "opencompass", "aisbench"])
@pytest.mark.parametrize("retriever", ["fixk", "random"])
def test_ppl_batch_jobs_equal_per_sample_jobs(compat: Any, retriever: str) -> None:
    prompts = _prompts(compat, retriever, ppl=True)
    tests = TESTS[:-1] if compat is None else TESTS
    ids = prompts.retriever.retrieve(tests)
    inferencer = PPLInferencer()
    labels = ["x", "y"]
    expected = [inferencer.job(prompts, i, e, d, labels) for i, (e, d) in enumerate(zip(tests, ids, strict=True))]
    assert inferencer.jobs(prompts, tests, ids, labels) == expected


def test_ppl_batch_jobs_raise_the_error_the_per_sample_loop_meets_first() -> None:
    # sample 0 fails only for label y (no field c), sample 1 for label x (q is None): per sample, y's error comes first
    r = FixKRetriever(INDEX, fix_id_list=[0], output_column="lab")
    prompt_t = PromptTemplate({"x": "</E>{q} x", "y": "</E>{q} y {c}"}, ice_token="</E>")
    prompts = Prompts(r, MetaTemplate(), PromptTemplate({"x": "{q} x", "y": "{q} y"}), prompt_t)
    tests: list[dict[str, Any]] = [{"q": "a"}, {"q": None, "c": 1}, {"q": "b", "c": 2}]
    ids = r.retrieve(tests)
    inferencer = PPLInferencer()
    with pytest.raises(Exception) as per_sample:
        [inferencer.job(prompts, i, e, d, ["x", "y"]) for i, (e, d) in enumerate(zip(tests, ids, strict=True))]
    with pytest.raises(type(per_sample.value)):
        inferencer.jobs(prompts, tests, ids, ["x", "y"])
