"""The command line's answers to a caller's mistakes and its help: one default per option, 0 shown, a bad JSON
option said as argparse says a bad option (exit 2), a missing model named for what it is, and hints that
point to the documentation's address, which works from an installed wheel."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from modules.cli import main

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _documentation_url() -> str:
    found = re.search(r'^Documentation = "([^"]+)"$', PYPROJECT.read_text(encoding="utf-8"), re.M)
    assert found, "pyproject.toml [project.urls] has no Documentation"
    return found.group(1)


def _exit_code(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    return int(exited.value.code or 0)


def _option_helps(out: str) -> dict[str, str]:
    """Each option's help text in ``--help`` output, keyed by its first option string."""
    helps: dict[str, str] = {}
    current = None
    for line in out.splitlines():
        entry = re.match(r"^  (-[-\w]+)", line)
        if entry:
            current = entry.group(1)
            helps[current] = line
        elif current and line.startswith("    "):
            helps[current] += " " + line.strip()
        else:
            current = None
    return {name: " ".join(text.split()) for name, text in helps.items()}


def test_tiny_model_help_shows_the_seed_default_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["tiny-model", "--help"]) == 0
    assert "(default: 0)" in _option_helps(capsys.readouterr().out)["--seed"]


@pytest.mark.parametrize("command", ["tiny-model", "serve", "chat", "render", "view", "eval", "playground"])
def test_each_option_shows_at_most_one_default(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code([command, "--help"]) == 0
    for option, text in _option_helps(capsys.readouterr().out).items():
        assert text.count("(default:") + text.count("; default:") <= 1, f"{command} {option}: {text}"
        assert "(default: None)" not in text, f"{command} {option}: {text}"


def test_eval_help_shows_its_own_defaults_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["eval", "--help"]) == 0
    helps = _option_helps(capsys.readouterr().out)
    assert helps["--workers"].endswith("(default: the config's, or 1)")
    assert helps["--output"].endswith("(default: the config's, or ABBR.jsonl)")


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["render", "x", "hi", "--history", "notjson"], "--history"),
        (["render", "x", "hi", "--tools", "[not json"], "--tools"),
        (["render", "x", "{not json"], "INPUT"),
        (["view", "x", "hi", "--history", "notjson"], "--history"),
    ],
)
def test_bad_json_in_an_option_is_a_usage_error_with_exit_2(
    argv: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"prompter {argv[0]}: error: invalid JSON in {option}: ") and err.count("\n") == 1, err


def test_serve_a_local_path_that_does_not_exist_says_so_without_a_download_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = f"{tmp_path}/nope"
    assert _exit_code(["serve", "--model", missing, "--port", "0"]) == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.startswith(f"prompter serve: error: {missing!r} is not a folder (it does not exist)"), error
    assert "download" not in error.replace("never downloads", ""), error


@pytest.mark.parametrize("missing", ["torch", "transformers"])
def test_the_missing_local_extra_hint_points_to_the_documentation_url(
    missing: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, missing, None)  # find_spec and import now both say "not installed"
    assert _exit_code(["tiny-model", "P"]) == 2
    err = capsys.readouterr().err
    assert f"(install torch first: {_documentation_url()}/install.md)" in err and "first: docs/" not in err, err
