"""Training data files are read as JSON and JSONL say, and every record's error names the record.

Before the fix: a JSONL line holding U+2028, U+2029 or U+0085 inside a string (valid JSON, common
in scraped text) was cut in two by ``str.splitlines`` and refused as "not a JSON line"; ``NaN``
and a key given twice were read silently (the last value winning), where the server refuses both;
a line nested past Python's recursion limit escaped as a bare ``RecursionError``; and a record too
long for the model's context raised a ``ContextLengthError`` that did not say which record.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from modules.errors import ContextLengthError
from modules.local.training.example import TrainingExampleError
from prompter import ChatPrompter

GOOD = {"input": "What is 2+2?", "output": "4"}


@cache
def module() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter("Answer briefly.", enable_system=False))


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"], ids=["U+2028", "U+2029", "U+0085"])
def test_a_unicode_line_separator_inside_a_string_is_data(tmp_path: Path, separator: str) -> None:
    record = {"input": f"first{separator}second", "output": "4"}
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    assert separator in path.read_text(encoding="utf-8")  # written raw, as JSON allows
    examples = module().training_examples(path, progress=False)
    assert examples[1] == module().training_examples([record], progress=False)[0]


@pytest.mark.parametrize(
    ("line", "match"),
    [('{"input": NaN, "output": "4"}', "NaN is not a JSON value"),
     ('{"input": "a", "output": "4", "input": "b"}', "'input' appears twice"),
     ("[" * 100_000 + "]" * 100_000, "nests too deep")],  # fmt: skip
    ids=["nan", "repeated-key", "deep"],
)
@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_what_json_has_no_meaning_for_is_a_typed_error_naming_the_line(
    tmp_path: Path, line: str, match: str, suffix: str
) -> None:
    path = tmp_path / f"train{suffix}"
    text = f"[{json.dumps(GOOD)},\n{line}]" if suffix == ".json" else json.dumps(GOOD) + "\n" + line + "\n"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TrainingExampleError, match=rf"train{suffix}(:\d+)?: not a JSON line \(.*{match}"):
        module().training_examples(path, progress=False)


def test_a_record_too_long_for_the_context_is_named_and_keeps_its_numbers(tmp_path: Path) -> None:
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps({"input": "word " * 5000, "output": "4"}) + "\n")
    with pytest.raises(ContextLengthError, match=r"^record 1 \(train.jsonl:2\): the prompt is \d+ tokens") as caught:
        module().training_examples(path, progress=False)
    assert caught.value.max_context == module().max_context and caught.value.prompt_tokens > caught.value.max_context
