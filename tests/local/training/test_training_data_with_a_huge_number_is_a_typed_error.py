"""A training file holding an integer of thousands of digits is a typed error naming the line, not a bare
ValueError from Python's integer conversion limit (4300 digits), as deep nesting already is."""

from __future__ import annotations

from pathlib import Path

import pytest

from modules.local.training.data import read_records
from modules.local.training.example import TrainingExampleError


def test_a_5000_digit_integer_in_a_jsonl_line_is_a_typed_error_naming_the_line(tmp_path: Path) -> None:
    data = tmp_path / "train.jsonl"
    data.write_text('{"input": "q", "output": "a"}\n{"input": ' + "9" * 5000 + ', "output": "a"}\n', encoding="utf-8")
    with pytest.raises(TrainingExampleError, match=r"train\.jsonl:2: not a JSON line \(a number too long"):
        read_records(data)
