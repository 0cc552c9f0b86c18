"""``prompter eval CONFIG --view N`` refuses, by name, the options only a run reads; it never ignores them.

Before the fix ``--limit``, ``--output``, ``--workers`` and ``--ray`` given with ``--view`` were
silently ignored (and invalid values such as ``--workers 0`` or ``--limit -1`` accepted): the
user believed an option was in force that was not, as ``prompter view`` already guards against
(tests/test_cli_view_options_of_the_other_form_are_refused.py). Each is now one line on stderr
naming the option, exit 2, and nothing printed or written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modules.cli import main

_CONFIG = {
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
def config(tmp_path: Path) -> Path:
    (tmp_path / "toy.jsonl").write_text("".join(json.dumps({"q": f"{i}?", "a": str(i)}) + "\n" for i in range(3)))
    (tmp_path / "eval.json").write_text(json.dumps(_CONFIG))
    return tmp_path / "eval.json"


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--limit", "1"], "--limit"),
        (["--limit", "-1"], "--limit"),
        (["--output", "o.jsonl"], "--output"),
        (["--workers", "2"], "--workers"),
        (["--workers", "0"], "--workers"),
        (["--ray"], "--ray"),
        (["--ray", "auto"], "--ray"),
        (["--limit", "1", "--workers", "2"], "--limit, --workers"),
    ],
)
def test_an_option_only_a_run_reads_is_refused_by_name(
    config: Path, options: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["eval", str(config), "--view", "1", *options])
    captured = capsys.readouterr()
    assert exited.value.code == 2
    assert captured.out == "" and captured.err.count("\n") == 1, captured
    assert f"error: {named}: `prompter eval CONFIG --view N` only prints prompts" in captured.err
    assert "leave" in captured.err and "drop --view" in captured.err
    assert not (config.parent / "o.jsonl").exists()


def test_view_with_the_options_it_reads_still_prints(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(config), "--view", "1", "--compat", "opencompass", "--no-progress"]) == 0
    assert capsys.readouterr().out == "--- sample 0 (gen) ---\nQ: 0?\nA: \n"
