"""Training data files: a bad row is a typed error naming the file and its line; JSON arrays are read.

Before the fix: a record's error said ``record 2`` only (no file, and after a blank line the
index is not the line); a line that is not an object was named by its index
(``d.jsonl[1]`` for line 3); a file that is not UTF-8 escaped as a bare
``UnicodeDecodeError``; chat messages that are not dicts escaped as a bare
``AttributeError``/``ValueError``; Alpaca's own ``alpaca_data.json`` (one JSON array) and a
CSV file were both "not a JSON line" at line 1.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from modules.local.training.example import TrainingExampleError
from prompter import ChatPrompter

GOOD = {"input": "What is 2+2?", "output": "4"}


@cache
def module() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter("Answer briefly.", enable_system=False))


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_bad_record_names_the_file_and_its_line(tmp_path: Path) -> None:
    path = write(tmp_path / "train.jsonl", [json.dumps(GOOD), "", json.dumps(GOOD), json.dumps({"input": "q"})])
    with pytest.raises(TrainingExampleError, match=r"^record 2 \(train\.jsonl:4\): .*answer under one of"):
        module().training_examples(path, progress=False)


def test_a_line_that_is_not_a_record_is_named_by_its_line(tmp_path: Path) -> None:
    path = write(tmp_path / "train.jsonl", [json.dumps(GOOD), "", "null"])
    with pytest.raises(TrainingExampleError, match=r"^train\.jsonl:3: expected a record"):
        module().training_examples(path, progress=False)


def test_a_file_that_is_not_utf8_is_a_typed_error_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b'\n{"input": "caf\xe9", "output": "a"}\n')
    with pytest.raises(TrainingExampleError, match=r"latin1\.jsonl:2: not UTF-8"):
        module().training_examples(path, progress=False)


@pytest.mark.parametrize(
    "messages",
    [
        ["hello", {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
        [{"role": "user", "content": "q"}, "aside", {"role": "assistant", "content": "a"}],
        [{"role": "user", "content": "q"}, ["assistant", "a"]],
    ],
    ids=["str-first", "str-between", "list-last"],
)
def test_chat_messages_that_are_not_dicts_are_a_typed_error(messages: list[Any]) -> None:
    with pytest.raises(TrainingExampleError, match=r"^record 0: messages\[\d\]: expected a message"):
        module().training_examples([{"messages": messages}], progress=False)


def test_a_json_array_file_is_read_as_its_records(tmp_path: Path) -> None:
    records = [{"instruction": "What is 2+2?", "input": "", "output": "4"}, GOOD]
    array = tmp_path / "alpaca_data.json"
    array.write_text(json.dumps(records, indent=2), encoding="utf-8")
    lines = write(tmp_path / "same.jsonl", [json.dumps(r) for r in records])
    got = module().training_examples(array, progress=False)
    assert [dict(e) for e in got] == [dict(e) for e in module().training_examples(lines, progress=False)]


def test_a_json_array_names_the_bad_record_by_its_index(tmp_path: Path) -> None:
    array = tmp_path / "data.json"
    array.write_text(json.dumps([GOOD, {"input": "q", "output": 3}]), encoding="utf-8")
    with pytest.raises(TrainingExampleError, match=r"^record 1 \(data\.json\[1\]\): 'output'"):
        module().training_examples(array, progress=False)


def test_jsonl_in_a_json_file_is_still_read(tmp_path: Path) -> None:
    path = write(tmp_path / "data.json", [json.dumps(GOOD), json.dumps(GOOD)])
    assert module().training_examples(path, progress=False).summary["examples"] == 2


def test_a_csv_file_is_told_how_to_load_it(tmp_path: Path) -> None:
    path = write(tmp_path / "train.csv", ["input,output", "What is 2+2?,4"])
    with pytest.raises(TrainingExampleError, match=r"train\.csv is CSV.*load_dataset\('csv'"):
        module().training_examples(path, progress=False)
