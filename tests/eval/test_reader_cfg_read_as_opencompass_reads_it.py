"""A pasted ``reader_cfg`` means what it means in OpenCompass, and a misspelt key is an error, never ignored.

A misspelt ``output_column`` used to be dropped silently: the answer field was then filled
into every Gen prompt. ``input_columns`` given as a string is OpenCompass's space-separated
list (it was read as its characters), and ``test_range`` / ``train_range`` pick the samples
OpenCompass's ``load_partial_dataset`` picks (they were ignored: the whole dataset ran).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from modules.errors import ModuleConfigError
from modules.eval.pipeline import plan
from prompter.templates.retrievers import BM25Retriever

ROWS = [{"question": f"question number {i}", "answer": str(i)} for i in range(10)]


def _dataset(reader: dict[str, Any], retriever: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "path": ROWS,
        "reader_cfg": reader,
        "infer_cfg": {
            "ice_template": {"type": "PromptTemplate", "template": "Q: {question}\nA: {answer}"},
            "prompt_template": {"type": "PromptTemplate", "template": "</E>Q: {question}\nA: {answer}", "ice_token": "</E>"},
            "retriever": retriever or {"type": "ZeroRetriever"},
        },
    }


@pytest.mark.parametrize("key", ["output_colum", "outputcolumn", "input_column"])
def test_a_misspelt_reader_key_names_the_key_it_resembles_instead_of_leaking_the_answer(key: str) -> None:
    reader = {"input_columns": ["question"], "output_column": "answer"}
    reader[key] = reader.pop("output_column" if key.startswith("output") else "input_columns")
    with pytest.raises(ModuleConfigError, match=r"reader_cfg: unknown key.*did you mean"):
        plan(_dataset(reader), {})


def test_opencompass_reader_keys_that_do_not_apply_to_a_file_are_accepted() -> None:
    reader = {"input_columns": ["question"], "output_column": "answer", "train_split": "train", "test_split": "test"}
    assert plan(_dataset(reader), {}).jobs()[0]["origin_prompt"] == "Q: question number 0\nA: "


def test_input_columns_as_a_string_are_space_separated_names() -> None:
    p = plan(_dataset({"input_columns": "question", "output_column": "answer"}, {"type": "BM25Retriever"}), {})
    assert p.prompts.retriever.input_columns == ["question"]
    assert BM25Retriever(ROWS, input_columns="question answer").input_columns == ["question", "answer"]
    index = [{"question": "cats purr", "answer": "x"}, {"question": "dogs bark", "answer": "y"}]
    r = BM25Retriever(index, input_columns="question", output_column="answer")
    assert r.retrieve([{"question": "dogs bark loudly", "answer": "?"}]) == [[1]]


@pytest.mark.parametrize(
    ("test_range", "expected"),
    [("[2:5]", [2, 3, 4]), (" [ : 2 ] ", [0, 1]), ("[-2:]", [8, 9]), ("[::4]", [0, 4, 8]), (None, list(range(10)))],
    ids=["2-to-5", "spaced", "last-two", "step", "none"],
)
def test_test_range_slices_the_samples(test_range: Any, expected: list[int]) -> None:
    reader = {"input_columns": ["question"], "output_column": "answer", "test_range": test_range}
    assert [int(t["answer"]) for t in plan(_dataset(reader), {}).tests] == expected


@pytest.mark.parametrize(("size", "n"), [(3, 3), (0.5, 5), (10, 10), (0, 10)], ids=["3", "half", "all", "zero-is-all"])
def test_a_numeric_test_range_draws_opencompass_seeded_samples(size: Any, n: int) -> None:
    reader = {"input_columns": ["question"], "output_column": "answer", "test_range": size}
    order = list(range(10))
    if n < 10:
        random.Random(n).shuffle(order)  # load_partial_dataset seeds with the number of samples drawn
    assert [int(t["answer"]) for t in plan(_dataset(reader), {}).tests] == order[:n]


def test_train_range_slices_the_examples_the_retriever_chooses_from() -> None:
    reader = {"input_columns": ["question"], "output_column": "answer", "train_range": "[5:]", "test_range": "[:1]"}
    p = plan(_dataset(reader, {"type": "FixKRetriever", "fix_id_list": [0, 1]}), {})
    assert p.jobs()[0]["origin_prompt"] == "Q: question number 5\nA: 5\nQ: question number 6\nA: 6\nQ: question number 0\nA: "


@pytest.mark.parametrize("bad", ["[1]", "index_list[:3]", "[0:3:0]", 2.5, True, [1, 2]], ids=repr)
def test_a_range_opencompass_cannot_read_is_an_error_naming_it(bad: Any) -> None:
    reader = {"input_columns": ["question"], "output_column": "answer", "test_range": bad}
    with pytest.raises(ModuleConfigError, match="test_range"):
        plan(_dataset(reader), {})
