"""``prompter eval``: configs as .json and .py files, --view, typed errors for bad configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modules.cli import main

CONFIG = {
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


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder with a 3-sample dataset and the config as .json and .py."""
    (tmp_path / "toy.jsonl").write_text("".join(json.dumps({"q": f"{i}?", "a": str(i)}) + "\n" for i in range(3)))
    (tmp_path / "eval.json").write_text(json.dumps(CONFIG))
    (tmp_path / "eval.py").write_text(f"dataset = {CONFIG['dataset']!r}\nmodels = [{CONFIG['model']!r}]\n")
    return tmp_path


@pytest.mark.parametrize("name", ["eval.json", "eval.py"])
def test_view_prints_each_samples_final_prompt_without_a_model(
    folder: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", str(folder / name), "--view", "2"]) == 0
    out = capsys.readouterr().out
    assert out == "--- sample 0 (gen) ---\nQ: 0?\nA: \n--- sample 1 (gen) ---\nQ: 1?\nA: \n"


def test_a_bad_config_is_a_one_line_error(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = json.loads(json.dumps(CONFIG))
    bad["dataset"]["infer_cfg"]["retriever"] = {"type": "os.system"}
    (folder / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", str(folder / "bad.json"), "--view", "1"])
    assert exit_info.value.code == 2
    assert "unknown type 'system'" in capsys.readouterr().err
