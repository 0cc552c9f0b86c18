"""``serve``/``chat`` given a model path with no folder there say so in one line, before anything loads.

The CLI promises that a mistake is one line on stderr (exit 2). A path that reads as
a path (absolute, ``./``, ``../``, ``~``, deeper than ``ORG/NAME``) or names a file
printed "loading ... (importing torch and transformers)" first. A Hugging Face id
(``org/name``) may still be in the local cache, so it goes on to the load.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from modules.cli import main


@pytest.mark.parametrize("command", ["serve", "chat"])
@pytest.mark.parametrize("shape", ["absolute", "dot-relative", "deep", "a-file"])
def test_a_model_path_with_no_folder_is_the_one_line_on_stderr(
    command: str, shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "weights.bin").write_bytes(b"\0")
    path = {
        "absolute": f"{tmp_path}/nope",
        "dot-relative": "./nope",
        "deep": "a/b/c",
        "a-file": "weights.bin",
    }[shape]
    argv = [command, "--model", path] + (["--port", "0"] if command == "serve" else [])
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "loading" not in err, err
    assert err.startswith(f"prompter {command}: error: {path!r} is not a folder ("), err
