"""Security: an output file that is no predictions file is never cut; hostile JSON is a typed error.

Resuming cuts only a torn last record (an interrupted write); a user's notes named as ``--output``,
or a predictions file with a foreign line inside, stay byte for byte as they were. JSON nested too
deep, or holding an integer past Python's digit limit, in a dataset, a config or a predictions file,
is a :class:`ModuleConfigError` naming the file (and line), never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modules.cli import main
from modules.errors import ModuleConfigError
from modules.eval.cli import load_config
from modules.eval.datasets import load_samples
from modules.eval.runner import read_done

DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "1" * 5000
JOBS = [{"index": i, "origin_prompt": f"p{i}"} for i in range(3)]

CONFIG: dict[str, Any] = {
    "dataset": {
        "path": "toy.jsonl",
        "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
        "infer_cfg": {
            "prompt_template": {"type": "PromptTemplate", "template": "Q: {q}\nA: {a}"},
            "retriever": {"type": "ZeroRetriever"},
            "inferencer": {"type": "GenInferencer", "max_out_len": 2},
        },
    },
    "model": {"type": "TrainableModule", "path": "no-such-model"},
}


def _record(i: int) -> bytes:
    return (json.dumps({"index": i, "kind": "gen", "origin_prompt": f"p{i}", "prediction": "x"}) + "\n").encode()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "toy.jsonl").write_text("".join(json.dumps({"q": f"{i}?", "a": str(i)}) + "\n" for i in range(3)))
    (tmp_path / "eval.json").write_text(json.dumps(CONFIG))
    return tmp_path


def test_an_existing_file_that_is_no_predictions_file_is_never_cut(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = folder / "notes.txt"
    notes.write_bytes(b"my notes on this run\nkeep them\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", str(folder / "eval.json"), "--output", str(notes), "--no-progress"])
    assert exit_info.value.code == 2
    assert notes.read_bytes() == b"my notes on this run\nkeep them\n"
    err = capsys.readouterr().err
    assert "notes.txt:1: not a predictions record" in err and "--output" in err


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (_record(0) + b"garbage\n" + _record(1), 2),
        (_record(0) + b"\n" + _record(1), 2),
        (_record(0) + b'{"index": 1\n' + _record(2), 2),  # a line torn mid-file is no torn last line
        (_record(0) + b"\xff\xfe\n" + _record(1), 2),
        (b"[1, 2]\n" + _record(0), 1),
        (b"one unterminated line of notes", 1),
        (_record(0) + b"the last line of notes", 2),
    ],
    ids=["garbage-between", "blank-between", "torn-between", "not-utf8", "no-object", "notes-no-eol", "notes-last"],
)
def test_a_foreign_line_in_a_predictions_file_is_an_error_and_the_file_is_never_cut(
    tmp_path: Path, content: bytes, line: int
) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(content)
    with pytest.raises(ModuleConfigError, match=rf"out\.jsonl:{line}: not a predictions record.*--output"):
        read_done(path, JOBS)
    assert path.read_bytes() == content


@pytest.mark.parametrize("torn", [b"{", b'{"ind', b'{"index": 2, "kind": "gen", "orig'], ids=["1", "5", "many"])
def test_a_torn_last_record_is_still_cut_and_answered_again(tmp_path: Path, torn: bytes) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(_record(0) + _record(1) + torn)
    assert sorted(read_done(path, JOBS)) == [0, 1]
    assert path.read_bytes() == _record(0) + _record(1)


@pytest.mark.parametrize("bad", [DEEP, '{"index": ' + HUGE_INT + "}"], ids=["deep", "huge-int"])
def test_a_hostile_line_in_a_predictions_file_is_a_typed_error_naming_its_line(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "out.jsonl"
    content = _record(0) + bad.encode() + b"\n"
    path.write_bytes(content)
    with pytest.raises(ModuleConfigError, match=r"out\.jsonl:2: not a predictions record"):
        read_done(path, JOBS)
    assert path.read_bytes() == content


@pytest.mark.parametrize(
    ("value", "says"),
    [(DEEP, "nested too deep"), ('{"q": ' + HUGE_INT + "}", "cannot be read")],
    ids=["deep", "huge-int"],
)
def test_a_hostile_dataset_row_is_a_typed_error_naming_file_and_line(tmp_path: Path, value: str, says: str) -> None:
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text('{"q": "fine"}\n' + value + "\n")
    with pytest.raises(ModuleConfigError, match=rf"rows\.jsonl:2: .*{says}"):
        load_samples(jsonl)
    whole = tmp_path / "rows.json"
    whole.write_text("[" + value + "]")
    with pytest.raises(ModuleConfigError, match=rf"rows\.json: .*{says}"):
        load_samples(whole)


@pytest.mark.parametrize(
    "text", ['{"dataset": ' + DEEP + "}", '{"workers": ' + HUGE_INT + "}"], ids=["deep", "huge-int"]
)
def test_a_hostile_json_config_is_a_typed_error_naming_the_file(tmp_path: Path, text: str) -> None:
    config = tmp_path / "cfg.json"
    config.write_text(text)
    with pytest.raises(ModuleConfigError, match=r"cfg\.json"):
        load_config(config)


def test_viewing_a_config_whose_dataset_is_nested_too_deep_is_a_one_line_error(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "toy.jsonl").write_text(DEEP + "\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["view", str(folder / "eval.json")])
    assert exit_info.value.code == 2
    assert "toy.jsonl:1: JSON nested too deep" in capsys.readouterr().err
