"""``prompter eval``: configs as .json and .py files, --view, typed errors for bad configs."""

from __future__ import annotations

import io
import json
import sys
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


class _Terminal(io.StringIO):
    """stdout as a terminal would be."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("name", ["eval.json", "eval.py"])
def test_prompter_view_config_shows_every_samples_final_prompt(
    folder: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["view", str(folder / name)]) == 0
    out = capsys.readouterr().out
    assert out == "".join(f"--- sample {i} (gen) ---\nQ: {i}?\nA: \n" for i in range(3))
    assert main(["view", str(folder / name), "--limit", "1"]) == 0
    assert capsys.readouterr().out == "--- sample 0 (gen) ---\nQ: 0?\nA: \n"


def test_prompter_view_config_is_coloured_on_a_terminal_unless_no_color(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["view", str(folder / "eval.json"), "--limit", "1"]) == 0
    assert terminal.getvalue() == "\x1b[1;36m--- sample 0 (gen) ---\x1b[0m\nQ: 0?\nA: \n"

    monkeypatch.setenv("NO_COLOR", "1")
    plain = _Terminal()
    monkeypatch.setattr(sys, "stdout", plain)
    assert main(["eval", str(folder / "eval.json"), "--view", "1"]) == 0
    assert plain.getvalue() == "--- sample 0 (gen) ---\nQ: 0?\nA: \n"


def test_prompter_view_of_a_ppl_config_labels_each_candidate(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ppl = json.loads(json.dumps(CONFIG))
    ppl["dataset"]["infer_cfg"]["prompt_template"]["template"] = {"yes": "Q: {q}\nA: yes", "no": "Q: {q}\nA: no"}
    ppl["dataset"]["infer_cfg"]["inferencer"] = {"type": "PPLInferencer"}
    (folder / "ppl.json").write_text(json.dumps(ppl))
    assert main(["view", str(folder / "ppl.json"), "--limit", "1"]) == 0
    assert capsys.readouterr().out == "--- sample 0 (ppl) ---\n[yes]\nQ: 0?\nA: yes\n[no]\nQ: 0?\nA: no\n"


def test_prompter_view_without_input_needs_a_config_file(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["view", str(folder / "missing.json")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "no evaluation config file" in err and "INSTRUCTION and the INPUT" in err
