"""Threat: a downloaded dataset's text reaches the user's terminal through ``prompter view CONFIG``. Its
escape sequences (``\\x1b]0;...\\x07`` retitles the window, ``\\x1b[2J`` clears it, ``\\r`` writes over a line
and hides what came before) are shown as ``\\xNN`` on a terminal, never acted on; the header's own colour is
still colour. Written to a file or a pipe, the prompt is the exact text. A lone surrogate in the dataset (a
``"\\ud800"`` JSON escape, which no UTF-8 stream can write) is a one-line error naming the sample, where
the view used to stop half-way with a traceback."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from modules.cli import main

HOSTILE = "hi\x1b]0;pwned\x07\x1b[2J\rthere\x9b\x00\ttab"
SHOWN = "hi\\x1b]0;pwned\\x07\\x1b[2J\\x0dthere\\x9b\\x00\ttab"


def _config(folder: Path, samples: list[dict[str, str]], inferencer: str = "GenInferencer") -> Path:
    template: object = "Q: {q}\nA: {a}"
    if inferencer == "PPLInferencer":
        template = {"yes\x1b[2J": "Q: {q}\nA: yes", "no": "Q: {q}\nA: no"}
    (folder / "d.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    config = {
        "dataset": {
            "path": "d.jsonl",
            "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
            "infer_cfg": {
                "prompt_template": {"type": "PromptTemplate", "template": template},
                "inferencer": {"type": inferencer},
            },
        },
        "model": {},
    }
    (folder / "eval.json").write_text(json.dumps(config))
    return folder / "eval.json"


class _Terminal(io.StringIO):
    """stdout as a UTF-8 terminal would be."""

    encoding = "utf-8"

    def isatty(self) -> bool:
        return True


def test_escape_sequences_in_a_sample_are_shown_not_acted_on_by_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["view", str(_config(tmp_path, [{"q": HOSTILE, "a": "x"}]))]) == 0
    assert terminal.getvalue() == f"\x1b[1;36m--- sample 0 (gen) ---\x1b[0m\nQ: {SHOWN}\nA: \n"


def test_a_ppl_label_that_spells_an_escape_sequence_is_shown_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["view", str(_config(tmp_path, [{"q": "1", "a": "no"}], "PPLInferencer"))]) == 0
    assert terminal.getvalue().splitlines()[1] == "[yes\\x1b[2J]"


def test_off_a_terminal_the_prompt_is_the_exact_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(_config(tmp_path, [{"q": HOSTILE, "a": "x"}]))]) == 0
    assert capsys.readouterr().out == f"--- sample 0 (gen) ---\nQ: {HOSTILE}\nA: \n"


def test_a_lone_surrogate_in_a_sample_is_a_one_line_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, [{"q": "fine", "a": "x"}])
    (tmp_path / "d.jsonl").write_text('{"q": "fine", "a": "x"}\n{"q": "bad \\ud800", "a": "x"}\n')
    with pytest.raises(SystemExit) as exit_info:
        main(["view", str(path)])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert "sample 1: character" in captured.err and "lone surrogate" in captured.err
    assert "Traceback" not in captured.err and len(captured.err.strip().splitlines()) == 1
