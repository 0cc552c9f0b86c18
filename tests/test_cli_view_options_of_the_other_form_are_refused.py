"""``prompter view`` has two forms; an option only the other form reads is a one-line mistake, never ignored.

``prompter view INSTRUCTION INPUT --limit 3`` printed the prompt as if ``--limit`` had not
been given, and ``prompter view CONFIG --model-format llama-3`` printed the config's prompts
without the family asked for: the user believed an option was in force that was not.
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


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured
    return captured.err


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--limit", "3"], "--limit"),
        (["--limit", "0"], "--limit"),
        (["--compat", "opencompass"], "--compat"),
        (["--compat", "aisbench", "--limit", "1"], "--limit, --compat"),
    ],
)
def test_view_of_a_prompt_refuses_the_options_only_a_config_reads(
    options: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(["view", "Be brief.", "hi", *options], capsys)
    assert err.startswith(f"prompter view: error: {named}: only `prompter view CONFIG` reads"), err
    assert "leave" in err


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--model-format", "llama-3"], "--model-format"),
        (["--system", ""], "--system"),
        (["--history", "[]"], "--history"),
        (["--tools", "[]"], "--tools"),
        (["--extra-keys", "context"], "--extra-keys"),
    ],
)
def test_view_of_a_config_refuses_the_options_only_a_prompt_reads(
    options: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "toy.jsonl").write_text(json.dumps({"q": "1?", "a": "1"}) + "\n", encoding="utf-8")
    config = tmp_path / "eval.json"
    config.write_text(json.dumps(_CONFIG), encoding="utf-8")
    err = _refused(["view", str(config), *options], capsys)
    assert err.startswith(f"prompter view: error: {named}: only `prompter view INSTRUCTION INPUT` reads it"), err


def test_view_of_either_form_with_its_own_options_still_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "toy.jsonl").write_text(json.dumps({"q": "1?", "a": "1"}) + "\n", encoding="utf-8")
    config = tmp_path / "eval.json"
    config.write_text(json.dumps(_CONFIG), encoding="utf-8")
    assert main(["view", str(config), "--limit", "1"]) == 0
    assert main(["view", "Be brief.", "hi", "--model-format", "llama-3", "--system", "S"]) == 0
    out = capsys.readouterr().out
    assert "Q: 1?" in out and "<|start_header_id|>system<|end_header_id|>\n\nS" in out
