"""Datasets into training examples: each record shape gives the example a call with the same arguments gives."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from modules.local.training.data import build_examples
from modules.local.training.example import TrainingExampleError
from prompter import ChatPrompter


@cache
def module(instruction: str = "Answer briefly.") -> Any:
    """A TrainableModule on the tiny qwen2.5 model with a chat prompter (no system prompt)."""
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter(instruction, enable_system=False))


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("record", "call"),
    [
        ({"input": "What is 2+2?", "output": "4"}, (("What is 2+2?", None), "4")),
        ({"question": "Why?", "answer": "Because."}, (("Why?", None), "Because.")),
        ({"instruction": "Add.", "input": "2+2", "output": "4"}, (("Add.\n\n2+2", None), "4")),
        ({"instruction": "Say hi.", "output": "hi"}, (("Say hi.", None), "hi")),
        ({"input": "q2", "history": [["q1", "a1"]], "output": "a2"}, (("q2", [["q1", "a1"]]), "a2")),
        (
            {"messages": [{"role": "system", "content": "ignored"}, {"role": "user", "content": "q1"},
                          {"role": "assistant", "content": "a1"}, {"role": "user", "content": "q2"},
                          {"role": "assistant", "content": "a2"}]},
            (("q2", [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"}]), "a2"),
        ),
    ],
    ids=["input-output", "question-answer", "alpaca", "alpaca-no-input", "history", "chat"],
)  # fmt: skip
def test_each_record_shape_gives_the_example_of_the_same_call(
    tmp_path: Path, record: dict[str, Any], call: Any
) -> None:
    (input, history), label = call
    m = module()
    examples = build_examples(m, write_jsonl(tmp_path / "d.jsonl", [record]), progress=False)
    assert dict(examples[0]) == dict(m.training_example(input, history, label=label))


@pytest.mark.parametrize("pair", [("What is 2+2?", "4"), ["What is 2+2?", "4"]], ids=["tuple", "list"])
def test_an_input_answer_pair_is_a_record(pair: Any) -> None:
    m = module()
    assert dict(build_examples(m, [pair], progress=False)[0]) == dict(m.training_example("What is 2+2?", label="4"))


def test_slots_are_filled_from_the_record() -> None:
    m = module("Translate into {lang}.")
    examples = build_examples(m, [{"lang": "French", "input": "cat", "output": "chat"}], progress=False)
    assert dict(examples[0]) == dict(m.training_example({"lang": "French", "input": "cat"}, label="chat"))


def test_summary_counts_examples_tokens_and_truncated() -> None:
    m = module()
    records = [{"input": "short", "output": "a"}, {"input": "long " * 40, "output": "b"}]
    full = build_examples(m, records, progress=False)
    cap = len(full[0]["input_ids"])
    examples = build_examples(m, records, max_length=cap, progress=False)
    assert examples.summary == {
        "examples": 2,
        "tokens": 2 * cap,
        "trained_tokens": sum(1 for t in full[0]["labels"] if t != -100),
        "truncated": 1,
    }


def test_a_list_of_records_is_not_mutated() -> None:
    records = [{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}]
    before = json.loads(json.dumps(records))
    build_examples(module(), records, progress=False)
    assert records == before


def test_hf_datasets_rows_are_records() -> None:
    datasets = pytest.importorskip("datasets")
    data = datasets.Dataset.from_list([{"input": "q", "output": "a"}])
    assert dict(build_examples(module(), data, progress=False)[0]) == dict(module().training_example("q", label="a"))


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ([{"input": "q"}], "answer under one of"),
        ([{"input": "q", "output": 3}], "'output': expected the answer as a str"),
        (["not a record"], r"data\[0\]: expected a record"),
        ([("q", "a", "extra")], r"data\[0\]: expected a record"),
        ([{"messages": [{"role": "user", "content": "q"}, {"role": "user", "content": "q"}]}], "last message"),
        ([{"messages": [{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "a"}]}], "no user"),
        ({"input": "q", "output": "a"}, "not one dict"),
        (42, "expected a JSONL path"),
        ("/no/such/file.jsonl", "is not a file"),
    ],
    ids=[
        "no-label",
        "label-not-str",
        "not-a-record",
        "triple",
        "chat-no-answer",
        "chat-no-user",
        "one-dict",
        "int",
        "no-file",
    ],
)
def test_bad_data_is_a_typed_error_naming_the_fault(data: Any, match: str) -> None:
    with pytest.raises(TrainingExampleError, match=match):
        build_examples(module(), data, progress=False)


def test_a_bad_json_line_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"input": "q", "output": "a"}\n{not json\n', encoding="utf-8")
    with pytest.raises(TrainingExampleError, match="bad.jsonl:2"):
        build_examples(module(), path, progress=False)
