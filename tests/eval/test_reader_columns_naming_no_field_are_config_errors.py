"""A ``reader_cfg`` column that names no field of the dataset is a config error, never a leaked answer.

Before the fix an ``output_column`` naming a field the dataset lacks (``"answr"`` for ``"answer"``)
was accepted: the answer field was then no output column, so the template filled it into every
prompt (the gold answer shown to the model) while each record's ``gold`` was null, and
``prompter view``/``prompter eval`` exited 0. A misspelt *key* was already refused; now the
value is too, naming the fields the dataset has. An ``input_columns`` name the dataset lacks
(read by the TopK/BM25 retrievers as the text to compare) is refused alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modules.cli import main
from modules.errors import ModuleConfigError
from modules.eval.pipeline import plan


def dataset(reader: dict[str, Any]) -> dict[str, Any]:
    return {
        "path": [{"question": "1+1?", "answer": "2"}, {"question": "2+2?", "answer": "4"}],
        "reader_cfg": reader,
        "infer_cfg": {
            "prompt_template": {"type": "PromptTemplate", "template": "Q: {question}\nA: {answer}"},
            "inferencer": {"type": "GenInferencer", "max_out_len": 4},
        },
    }


@pytest.mark.parametrize(
    ("reader", "key", "name"),
    [
        ({"input_columns": ["question"], "output_column": "answr"}, "output_column", "answr"),
        ({"input_columns": ["question"], "output_column": "nope"}, "output_column", "nope"),
        ({"input_columns": ["question", "qestion"], "output_column": "answer"}, "input_columns", "qestion"),
        ({"input_columns": "question nope", "output_column": "answer"}, "input_columns", "nope"),
    ],
)
def test_a_column_the_dataset_lacks_is_an_error_listing_its_fields(
    reader: dict[str, Any], key: str, name: str
) -> None:
    with pytest.raises(ModuleConfigError) as caught:
        plan(dataset(reader), model={})
    message = str(caught.value)
    assert f"reader_cfg[{key!r}]: {name!r} names no field of the dataset" in message
    assert "['question', 'answer']" in message


def test_the_right_columns_keep_the_answer_out_of_the_prompt() -> None:
    jobs = plan(dataset({"input_columns": ["question"], "output_column": "answer"}), model={}).jobs()
    assert [(j["origin_prompt"], j["gold"]) for j in jobs] == [("Q: 1+1?\nA: ", "2"), ("Q: 2+2?\nA: ", "4")]


@pytest.mark.parametrize("command", [["view"], ["eval", "--view", "1"], ["eval"]])
def test_the_cli_says_so_in_one_line_and_exits_2(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "toy.jsonl").write_text('{"question": "1+1?", "answer": "2"}\n')
    config = {"dataset": {**dataset({"input_columns": ["question"], "output_column": "nope"}), "path": "toy.jsonl"},
              "model": {"type": "TrainableModule", "path": "no-such-model"}}  # fmt: skip
    (tmp_path / "eval.json").write_text(json.dumps(config))
    argv = [command[0], str(tmp_path / "eval.json"), *command[1:], *(["--output", str(tmp_path / "o.jsonl")]
            if command == ["eval"] else [])]  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    captured = capsys.readouterr()
    assert exit_info.value.code == 2 and captured.out == ""
    assert captured.err.count("\n") == 1 and "'nope' names no field of the dataset" in captured.err
    assert not (tmp_path / "o.jsonl").exists()
