"""``prompter tiny-model PATH`` where no folder can be made (under a file): one line naming the path and the
remedy, said before the "building ..." progress line, as every other command-line mistake is."""

from __future__ import annotations

from pathlib import Path

import pytest

from modules.cli import main

pytest.importorskip("torch")  # the command checks the 'local' extra first


def test_tiny_model_under_a_file_is_one_line_before_any_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder\n", encoding="utf-8")
    target = a_file / "tiny"
    with pytest.raises(SystemExit) as exited:
        main(["tiny-model", str(target)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # no "building a tiny ... model" line before the mistake
    assert err.startswith(f"prompter tiny-model: error: cannot create the model folder {str(target)!r} ("), err
    assert "give a new or empty folder" in err, err
    assert a_file.read_text(encoding="utf-8") == "not a folder\n"
