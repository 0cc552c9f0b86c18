"""A ``.py`` eval config that is no valid Python, or fails as it runs, is one line on stderr and exit 2.

Before the fix only an ImportError was turned into a config error: a SyntaxError, a NameError
or any exception the config's own code raised reached the user as a raw traceback and exit 1,
against the CLI's contract (a user mistake is one line and exit 2). Now the line names the
file, the line, the error's type and its message, with no traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from modules.cli import main
from modules.errors import ModuleConfigError
from modules.eval.cli import load_config

CASES = {
    "syntax-error": ("x = 1\ndataset = dict(\n", 2, "SyntaxError: '(' was never closed"),
    "indentation-error": ("x = 1\n  y = 2\n", 2, "IndentationError: unexpected indent"),
    "name-error": ("x = 1\ndataset = undefined_name\n", 2, "NameError: name 'undefined_name' is not defined"),
    "zero-division": ("x = 1/0\n", 1, "ZeroDivisionError: division by zero"),
    "in-a-function-of-the-config": ("def f():\n    return {}['k']\n\nx = f()\n", 2, "KeyError: 'k'"),
    "multi-line-message": ("raise ValueError('a\\nb')\n", 1, "ValueError: a b"),
}


@pytest.mark.parametrize(("source", "line", "said"), list(CASES.values()), ids=list(CASES))
def test_the_error_names_file_line_type_and_message(tmp_path: Path, source: str, line: int, said: str) -> None:
    config = tmp_path / "bad.py"
    config.write_text(source)
    with pytest.raises(ModuleConfigError) as caught:
        load_config(config)
    assert str(caught.value).startswith(f"config {config}:{line}: {said}")


@pytest.mark.parametrize("command", [["view"], ["eval", "--view", "1"], ["eval"]])
@pytest.mark.parametrize("case", ["syntax-error", "name-error", "zero-division"])
def test_the_cli_says_it_in_one_line_and_exits_2(
    tmp_path: Path, command: list[str], case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source, line, said = CASES[case]
    config = tmp_path / "bad.py"
    config.write_text(source)
    with pytest.raises(SystemExit) as exit_info:
        main([command[0], str(config), *command[1:]])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert err.count("\n") == 1 and f"{config}:{line}: {said}" in err and "Traceback" not in err


def test_a_syntax_error_in_a_module_the_config_imports_names_that_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "helper_with_a_typo.py").write_text("def f(:\n")
    (tmp_path / "bad.py").write_text("import helper_with_a_typo\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleConfigError) as caught:
        load_config(tmp_path / "bad.py")
    assert f"{tmp_path / 'helper_with_a_typo.py'}:1: SyntaxError" in str(caught.value)
