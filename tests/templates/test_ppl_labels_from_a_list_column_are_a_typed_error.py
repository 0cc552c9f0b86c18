"""PPL labels taken from the test column: a value that cannot be one label is a typed error naming it.

A dataset whose output column holds a list of gold answers (or a dict) gives no single
candidate per label; that used to escape as a bare ``TypeError: unhashable type``.
"""

from __future__ import annotations

from typing import Any

import pytest

from modules.eval.pipeline import plan
from prompter.errors import InputTypeError, PromptError
from prompter.templates import PromptTemplate
from prompter.templates.retrievers import ZeroRetriever


@pytest.mark.parametrize("gold", [["2", "two"], {"x": 1}, ("2", ["two"])], ids=["list", "dict", "tuple-of-list"])
def test_an_unhashable_label_value_is_an_input_type_error_naming_the_sample(gold: Any) -> None:
    retriever = ZeroRetriever([], output_column="a")
    tests = [{"q": "1+1", "a": "2"}, {"q": "2+2", "a": gold}]
    with pytest.raises(InputTypeError) as info:
        retriever.get_labels(tests, prompt_template=PromptTemplate("Q: {q}\nA: {a}"))
    assert isinstance(info.value, (PromptError, TypeError))
    assert "tests[1]['a']" in str(info.value)
    assert "key the prompt template by label" in str(info.value)


def test_a_ppl_plan_over_a_list_column_is_an_input_type_error_not_a_crash() -> None:
    dataset = dict(
        path=[{"q": "1+1", "a": ["2", "two"]}],
        reader_cfg=dict(input_columns=["q"], output_column="a"),
        infer_cfg=dict(
            prompt_template=dict(type="PromptTemplate", template="Q: {q}\nA: {a}"),
            retriever=dict(type="ZeroRetriever"),
            inferencer=dict(type="PPLInferencer"),
        ),
    )
    with pytest.raises(InputTypeError, match=r"tests\[0\]\['a'\]"):
        plan(dataset, model={})


def test_hashable_labels_keep_their_first_seen_order() -> None:
    retriever = ZeroRetriever([], output_column="a")
    tests = [{"a": "B"}, {"a": 1}, {"a": "B"}, {"a": ("x", 2)}]
    assert retriever.get_labels(tests) == ["B", 1, ("x", 2)]
