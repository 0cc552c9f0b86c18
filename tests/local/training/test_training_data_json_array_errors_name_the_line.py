"""A ``.json`` file holding one array (Alpaca's ``alpaca_data.json``, pretty-printed over many lines):
an error names the line it is on, as for JSONL.

Before the fix, a syntax error anywhere in a pretty-printed array was reported at line 1
(``data.json:1: not a JSON line (Expecting value)``: the file was re-read as JSONL, whose first
line is a lone ``[``), and a repeated key or a NaN named no line at all (``data.json: ...``),
against the promise that they are "an error naming the line".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modules.local.training.data import read_records
from modules.local.training.example import TrainingExampleError

RECORDS = [{"instruction": f"Question {i}?", "input": "", "output": f"Answer {i}"} for i in range(5)]
PRETTY = json.dumps(RECORDS, indent=4)  # as alpaca_data.json is written


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize(
    "broken",
    [PRETTY.replace('"Answer 3"', '"Answer 3",', 1),  # a trailing comma in a record
     PRETTY.replace('"Answer 3"\n', '"Answer 3"\n    "extra": 1\n', 1),  # a missing comma
     PRETTY.replace('"Question 2?"', '"Question 2?', 1),  # an unclosed string
     PRETTY.replace("}\n]", "},\n]"),  # a trailing comma after the last record
     PRETTY[:-10]],  # cut short
    ids=["trailing-comma-in-record", "missing-comma", "unclosed-string", "trailing-comma", "truncated"],
)
def test_a_syntax_error_in_a_pretty_printed_array_names_its_line(tmp_path: Path, broken: str) -> None:
    with pytest.raises(json.JSONDecodeError) as oracle:
        json.loads(broken)
    path = tmp_path / "alpaca_data.json"
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(TrainingExampleError, match=rf"^alpaca_data\.json:{oracle.value.lineno}: "):
        read_records(path)


@pytest.mark.parametrize(
    ("broken", "needle", "match"),
    [(PRETTY.replace('"output": "Answer 3"', '"output": "Answer 3", "output": "x"', 1), "Question 3?", "appears twice"),
     (PRETTY.replace('"Answer 2"', "NaN", 1), "Question 2?", "NaN is not a JSON value")],
    ids=["repeated-key", "nan"],
)
def test_what_json_refuses_in_a_pretty_printed_array_names_the_records_line(
    tmp_path: Path, broken: str, needle: str, match: str
) -> None:
    path = tmp_path / "alpaca_data.json"
    path.write_text(broken, encoding="utf-8")
    start = line_of(broken, needle) - 1  # the record's "{" is on the line before its first key
    with pytest.raises(TrainingExampleError, match=rf"^alpaca_data\.json:{start}: .*{match}"):
        read_records(path)


def test_a_pretty_printed_array_is_still_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "alpaca_data.json"
    path.write_text(PRETTY, encoding="utf-8")
    assert read_records(path) == RECORDS
    path.write_text("[ \n ]", encoding="utf-8")
    assert read_records(path) == []
