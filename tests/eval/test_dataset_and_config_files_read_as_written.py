"""Evaluation inputs as people save them: a byte-order mark is not data, and a broken file or option is
a ModuleConfigError naming it (``prompter eval`` then prints one line, not a traceback).

Spreadsheet programs save CSV (and editors JSON) as UTF-8 with a byte-order mark. It used to
become part of the first column's name (``'\\ufeffquestion'``: "the entry has no field
'question'" for a file that plainly has it) or a bare ``JSONDecodeError``; malformed JSON, text
that is not UTF-8, a ``workers`` or ``limit`` of the wrong type and a model that is not a dict
were bare ``ValueError`` / ``TypeError`` tracebacks, and a negative ``limit`` silently dropped the
last samples.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modules.cli import main
from modules.errors import ModuleConfigError
from modules.eval.pipeline import plan
from modules.eval.runner import run_eval

BOM = b"\xef\xbb\xbf"
FILES = {
    "toy.csv": b"question,answer\n1+1=?,2\n2+2=?,4\n",
    "toy.jsonl": b'{"question": "1+1=?", "answer": "2"}\n{"question": "2+2=?", "answer": "4"}\n',
    "toy.json": b'[{"question": "1+1=?", "answer": "2"}, {"question": "2+2=?", "answer": "4"}]',
}


def _dataset(path: Any) -> dict[str, Any]:
    return {
        "path": path,
        "reader_cfg": {"input_columns": ["question"], "output_column": "answer"},
        "infer_cfg": {"prompt_template": {"type": "PromptTemplate", "template": "Q: {question}\nA: {answer}"}},
    }


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_byte_order_mark_is_not_part_of_the_data(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(BOM + FILES[name])
    jobs = plan(_dataset(name), {}, base_dir=tmp_path).jobs()
    assert [job["origin_prompt"] for job in jobs] == ["Q: 1+1=?\nA: ", "Q: 2+2=?\nA: "]


@pytest.mark.parametrize(
    "name, data, said",
    [
        ("bad.json", b'[{"question": ', "bad.json:1:15: not valid JSON"),
        ("latin.csv", b"question,answer\n\xe9t\xe9,2\n", "not UTF-8"),
        ("latin.jsonl", b'{"question": "\xe9"}\n', "not UTF-8"),
    ],
)
def test_a_broken_dataset_file_is_a_config_error_naming_it(tmp_path: Path, name: str, data: bytes, said: str) -> None:
    (tmp_path / name).write_bytes(data)
    with pytest.raises(ModuleConfigError, match=said):
        plan(_dataset(name), {}, base_dir=tmp_path)


@pytest.mark.parametrize(
    "config, said",
    [
        ({"workers": "two"}, r"config\['workers'\]"),
        ({"workers": True}, r"config\['workers'\]"),
        ({"limit": "3"}, "limit"),
        ({"limit": -1}, "limit"),
        ({"model": "tiny"}, "model: expected a dict"),
        ({"models": {"type": "TrainableModule"}}, r"config\['models'\]"),
    ],
)
def test_an_option_of_the_wrong_type_is_a_config_error_naming_it(
    tmp_path: Path, config: dict[str, Any], said: str
) -> None:
    (tmp_path / "toy.jsonl").write_bytes(FILES["toy.jsonl"])
    # a model that cannot be built: nothing is ever sent, whatever the option does
    full = {"dataset": _dataset("toy.jsonl"), "model": {"type": "NoSuchModule"}, **config}
    with pytest.raises(ModuleConfigError, match=said):
        run_eval(full, base_dir=tmp_path, progress=False)
    assert not (tmp_path / "toy.jsonl.jsonl").exists()


@pytest.mark.parametrize("command", ["view", "eval"])
@pytest.mark.parametrize("text", [b'{"dataset": ', BOM + b'{"dataset": {"path": "toy.csv"}'])
def test_a_config_file_that_is_not_json_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, text: bytes
) -> None:
    (tmp_path / "eval.json").write_bytes(text)
    with pytest.raises(SystemExit) as exited:  # argparse's error(): the message and status 2
        main([command, str(tmp_path / "eval.json")])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "eval.json" in err and "not valid JSON" in err and "Traceback" not in err


def test_a_config_file_with_a_byte_order_mark_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "toy.csv").write_bytes(BOM + FILES["toy.csv"])
    config = {"dataset": _dataset("toy.csv")}
    (tmp_path / "eval.json").write_bytes(BOM + json.dumps(config).encode())
    assert main(["view", str(tmp_path / "eval.json")]) == 0
    assert "Q: 2+2=?" in capsys.readouterr().out
