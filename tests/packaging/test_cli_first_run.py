"""What a new user meets first on the command line: --version, help, progress, clear one-line errors, chat commands."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

import prompter
from modules.chat_repl import run_chat
from modules.cli import main


def _exit_code(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    return int(exited.value.code or 0)


def test_version_names_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["--version"]) == 0
    assert capsys.readouterr().out == f"prompter {prompter.__version__}\n"


@pytest.mark.parametrize("command", ["tiny-model", "serve", "chat", "render", "view", "eval"])
def test_every_option_has_help_and_shows_its_default(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    from modules.cli import _parser

    sub = next(a for a in _parser()._actions if a.dest == "command").choices[command]  # type: ignore[union-attr]
    for action in sub._actions:
        if action.dest == "help":
            continue
        assert action.help, f"{command} {action.option_strings or action.dest} has no help"
    assert _exit_code([command, "--help"]) == 0
    out = capsys.readouterr().out
    # by identity: `0 in (None, False)` is true (0 == False), and a default of 0 is one to show
    def shown(default: object) -> bool:
        return not (default is None or default is False or default == "==SUPPRESS==")

    with_defaults = [a for a in sub._actions if a.option_strings and shown(a.default)]
    assert command != "tiny-model" or any(a.default == 0 and a.default is not False for a in with_defaults)
    for action in with_defaults:
        assert f"(default: {action.default})" in " ".join(out.split()), f"{command}: default of {action.dest} not shown"


def test_render_takes_system_tools_and_extra_keys(capsys: pytest.CaptureFixture[str]) -> None:
    tools = [{"type": "function", "function": {"name": "purr_rate", "parameters": {"type": "object"}}}]
    argv = ["render", "About {topic}.", json.dumps({"topic": "cats", "context": "Cats purr.", "input": "Why?"})]
    argv += ["--system", "Be brief.", "--tools", json.dumps(tools), "--extra-keys", "context", "--format", "openai"]
    assert main(argv) == 0
    body = json.loads(capsys.readouterr().out)
    system = body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("Be brief.")
    assert "Cats purr." in system["content"] and "About cats." in system["content"]
    assert body["tools"] == tools
    assert body["messages"][-1] == {"role": "user", "content": "Why?"}


def test_render_bad_tools_json_is_a_clean_exit(capsys: pytest.CaptureFixture[str]) -> None:
    # a mistake on the command line like the others: one line on stderr, exit status 2
    assert _exit_code(["render", "x", "hi", "--tools", "[not json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("prompter render: error: invalid JSON in --tools") and err.count("\n") == 1, err


@pytest.mark.parametrize("port", ["99999", "-1", "65536"])
def test_a_port_out_of_range_is_one_line_and_exit_2(port: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["serve", "--model", str(tmp_path), "--port", port]) == 2
    err = capsys.readouterr().err
    assert err == f"prompter serve: error: --port: expected 0..65535 (0 picks a free port), got {port}\n"


@pytest.mark.parametrize(
    ("missing", "argv", "extra"),
    [
        ("fastapi", ["serve", "--model", "M", "--port", "0"], "server"),
        ("uvicorn", ["serve", "--model", "M"], "server"),
        ("torch", ["chat", "--model", "M"], "local"),
        ("transformers", ["tiny-model", "P"], "local"),
        ("fastapi", ["demo"], "server"),
    ],
)
def test_a_missing_extra_is_named_with_the_install_command(
    missing: str, argv: list[str], extra: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, missing, None)  # find_spec and import now both say "not installed"
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"pip install 'prompter-kit[{extra}]'" in err and missing in err, err


def test_tiny_model_reports_progress_on_stderr_and_the_result_on_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[Path] = []

    def fake_build(path: str, **options: object) -> Path:
        built.append(Path(path))
        return Path(path)

    monkeypatch.setattr("modules.local.tiny_model.build_tiny_model", fake_build)
    assert main(["tiny-model", str(tmp_path / "m")]) == 0
    captured = capsys.readouterr()
    assert built == [tmp_path / "m"]
    assert captured.out == f"built a tiny qwen2.5 model in {tmp_path / 'm'}\n"
    assert "building a tiny qwen2.5 model" in captured.err and "random weights" in captured.err
    assert "built in" in captured.err


class _Recorder:
    """A stand-in module: records what reaches the model."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[list[str]]]] = []

    def stream(self, question: str, history: list[list[str]]) -> _Stream:
        self.calls.append((question, [list(turn) for turn in history]))
        return _Stream(f"echo {question}")


class _Stream:
    def __init__(self, text: str) -> None:
        self.text = text

    def __enter__(self) -> _Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __iter__(self):  # type: ignore[no-untyped-def]
        yield self.text


def test_chat_commands_never_reach_the_model() -> None:
    lines = iter(["/help", "hello", "/reset", "again", "/bogus", "//slash", "/exit", "never read"])
    out = io.StringIO()
    recorder = _Recorder()
    assert run_chat(recorder, read=lambda prompt: next(lines), out=out) == 0
    assert recorder.calls == [
        ("hello", []),
        ("again", []),  # /reset forgot the first exchange
        ("/slash", [["again", "echo again"]]),
    ]
    text = out.getvalue()
    assert "/reset" in text and "/exit" in text  # the help
    assert "(conversation reset)" in text and "unknown command /bogus" in text
    assert next(lines) == "never read"


def test_a_turn_over_the_models_context_is_said_and_the_chat_goes_on(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the tiny model reads 2048 tokens: this line is about 2400; before, the whole chat ended with exit code 2
    too_long = "hello there " * 1200
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{too_long}\nhello\n/exit\n"))
    assert main(["chat", "--model", str(tiny_model_path), "--max-new-tokens", "3"]) == 0
    out = capsys.readouterr().out
    assert "ContextLengthError" in out and "/reset" in out
    assert out.count("model> ") == 2  # the next line was answered


class _Failing(_Recorder):
    """Refuses its first question with a typed error, as a server or a full context does."""

    def stream(self, question: str, history: list[list[str]]) -> _Stream:
        if not self.calls:
            self.calls.append((question, [list(turn) for turn in history]))
            from modules.errors import BadRequestError

            raise BadRequestError("the server refused it", status_code=400)
        return super().stream(question, history)


def test_a_failed_turn_is_left_out_of_the_history() -> None:
    lines = iter(["refused", "hello", "/exit"])
    recorder = _Failing()
    out = io.StringIO()
    assert run_chat(recorder, read=lambda prompt: next(lines), out=out) == 0
    assert recorder.calls == [("refused", []), ("hello", [])]
    assert "BadRequestError: Error code: 400 - the server refused it" in out.getvalue()


def test_chat_on_a_real_model_shows_progress_then_answers(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("/help\nhello\n/exit\n"))
    assert main(["chat", "--model", str(tiny_model_path), "--max-new-tokens", "3"]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("model> ") == 1
    assert f"loading {tiny_model_path}" in captured.err and "model loaded in" in captured.err


def test_the_demo_tells_a_short_story_and_says_the_weights_are_random(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from modules.demo import main as demo

    monkeypatch.setenv("PROMPTER_CACHE", str(tiny_model_path.parent.parent))
    out = io.StringIO()
    assert demo(out) == 0
    text = out.getvalue()
    lines = text.splitlines()
    assert len(lines) <= 40, f"{len(lines)} lines"
    assert "RANDOM" in text and "gibberish" in text
    steps = [line for line in lines if line[:2] in ("1.", "2.", "3.", "4.")]
    assert len(steps) == 4
    assert "(same as in-process: True)" in text
    # the next step is a page at the documentation's address (pyproject.toml), not a path only a clone has
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    documentation = pyproject.split('\nDocumentation = "', 1)[1].split('"', 1)[0]
    assert lines[-1].endswith(f"Next: {documentation}/getting-started.md"), lines[-1]
