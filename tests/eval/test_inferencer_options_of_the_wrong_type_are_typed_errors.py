"""An inferencer option of the wrong type in a pasted config (``labels=5``, ``labels="yes"``,
``stopping_criteria=-1`` or a dict) is a ``ModuleConfigError`` naming the option and what it takes, never a
bare ``TypeError`` from iterating it, and never a value read another way (a string's characters as labels, a
dict's keys as stop words). The config is left as it was."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from modules.errors import ModuleConfigError
from modules.eval import plan

SAMPLES = [{"q": "1+1", "a": "yes"}, {"q": "2+2", "a": "no"}]
READER = dict(input_columns=["q"], output_column="a")


def _dataset(inferencer: dict[str, Any]) -> dict[str, Any]:
    template: Any = "Q: {q}\nA: {a}"
    if inferencer["type"] == "PPLInferencer":
        template = {"yes": "Q: {q}\nA: yes", "no": "Q: {q}\nA: no"}
    return dict(
        path=SAMPLES,
        reader_cfg=READER,
        infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template=template), inferencer=inferencer),
    )


@pytest.mark.parametrize("labels", [5, "yes", {"yes": 1}, 1.5], ids=["int", "str", "dict", "float"])
def test_ppl_labels_that_are_no_list_are_a_config_error_naming_labels(labels: Any) -> None:
    dataset = _dataset(dict(type="PPLInferencer", labels=labels))
    before = copy.deepcopy(dataset)
    with pytest.raises(ModuleConfigError, match=r"labels: expected a list of the template's labels"):
        plan(dataset, {}).jobs()
    assert dataset == before


def test_ppl_labels_as_a_list_or_tuple_still_choose_the_candidates() -> None:
    for labels in (["no", "yes"], ("no", "yes")):
        job = plan(_dataset(dict(type="PPLInferencer", labels=labels)), {}).jobs()[0]
        assert job["origin_prompt"] == ["Q: 1+1\nA: no", "Q: 1+1\nA: yes"]


@pytest.mark.parametrize("stops", [-1, {"\n": 1}, "\n", ["\n", 3]], ids=["int", "dict", "str", "item"])
@pytest.mark.parametrize("stop_words", [None, ["</s>"]], ids=["no-stop-words", "model-stop-words"])
def test_stopping_criteria_that_are_no_list_of_strings_are_a_config_error(stops: Any, stop_words: Any) -> None:
    dataset = _dataset(dict(type="GenInferencer", stopping_criteria=stops))
    model = {} if stop_words is None else dict(stop_words=stop_words)
    before = (copy.deepcopy(dataset), copy.deepcopy(model))
    with pytest.raises(ModuleConfigError, match=r"stopping_criteria: expected a list of non-empty strings"):
        plan(dataset, model).jobs()
    assert (dataset, model) == before


def test_stopping_criteria_none_means_none_with_or_without_the_models_stop_words() -> None:
    dataset = _dataset(dict(type="GenInferencer", stopping_criteria=None))
    assert plan(dataset, {}).inferencer.stopping_criteria == ()  # type: ignore[union-attr]
    assert plan(dataset, dict(stop_words=["</s>"])).inferencer.stopping_criteria == ("</s>",)  # type: ignore[union-attr]
