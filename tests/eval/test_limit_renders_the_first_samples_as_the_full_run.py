"""``limit`` (``prompter view --limit``, ``prompter eval --limit``) renders the first samples exactly as
the whole run renders them: the in-context examples and the PPL labels come from the whole dataset."""

from __future__ import annotations

from typing import Any

import pytest

from modules.eval.pipeline import plan

SAMPLES = [{"q": f"{i}+{i}", "a": str(2 * i), "label": "yes" if i < 8 else "no"} for i in range(10)]


def _dataset(retriever: dict[str, Any], inferencer: str = "GenInferencer") -> dict[str, Any]:
    return {
        "path": SAMPLES,
        "reader_cfg": {"input_columns": ["q"], "output_column": "label" if inferencer == "PPLInferencer" else "a"},
        "infer_cfg": {
            "ice_template": {"type": "PromptTemplate", "template": "{q}={a}"},
            "prompt_template": {"type": "PromptTemplate", "template": "</E>{q}=", "ice_token": "</E>"},
            "retriever": retriever,
            "inferencer": {"type": inferencer},
        },
    }


@pytest.mark.parametrize(
    "retriever",
    [
        {"type": "FixKRetriever", "fix_id_list": [0, 7]},
        {"type": "RandomRetriever", "ice_num": 3, "seed": 43},
        {"type": "BM25Retriever", "ice_num": 2},
    ],
    ids=["fixk-beyond-the-limit", "random", "bm25"],
)
@pytest.mark.parametrize("compat", [None, "opencompass"])
def test_the_first_samples_get_the_in_context_examples_of_the_whole_run(retriever: dict[str, Any], compat: Any) -> None:
    full = plan(_dataset(retriever), model={}, compat=compat).jobs()
    first = plan(_dataset(retriever), model={}, compat=compat, limit=3).jobs()
    assert [job["origin_prompt"] for job in first] == [job["origin_prompt"] for job in full[:3]]


def test_the_first_samples_are_scored_against_the_labels_of_the_whole_test_column() -> None:
    dataset = _dataset({"type": "ZeroRetriever"}, "PPLInferencer")
    assert plan(dataset, model={}, limit=2).labels == plan(dataset, model={}).labels == ["yes", "no"]
