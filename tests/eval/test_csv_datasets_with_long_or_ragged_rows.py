"""CSV datasets: a long field (a whole document) is read; a malformed row is a typed error naming its line.

The csv module refuses fields over 128 KiB by default, which long-context datasets
exceed; a row with more fields than the header would lose them under no column.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from modules.errors import ModuleConfigError
from modules.eval.datasets import load_samples


def _write(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


def test_a_csv_field_longer_than_the_csv_modules_default_limit_is_read_whole(tmp_path: Path) -> None:
    document = "word " * 100_000  # 500 KB
    path = _write(tmp_path / "long.csv", [["context", "answer"], [document, "1"], ["short", "2"]])
    limit = csv.field_size_limit()
    assert load_samples(path) == [{"context": document, "answer": "1"}, {"context": "short", "answer": "2"}]
    assert csv.field_size_limit() == limit  # the process's setting is left as it was


def test_a_csv_row_with_more_fields_than_the_header_names_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "ragged.csv", [["q", "a"], ["1+1", "2"], ["2+2", "4", "lost"]])
    with pytest.raises(ModuleConfigError, match=r"ragged\.csv:3: 3 fields but the header names 2"):
        load_samples(path)

