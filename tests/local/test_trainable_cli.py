"""The `prompter` console script (modules.cli): every command, run in process."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.cli import main


def test_render_prints_the_models_string(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["render", "You answer about {topic}.", '{"topic": "cats", "input": "Why?"}', "--model-format", "qwen2.5"])
        == 0
    )
    out = capsys.readouterr().out
    assert "<|im_start|>user\nWhy?<|im_end|>" in out and "cats" in out


def test_render_openai_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "Be brief.", "hi", "--format", "openai", "--history", '[["q", "a"]]']) == 0
    body = json.loads(capsys.readouterr().out)
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]


def test_view_shows_both(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", "Be brief.", "hi", "--model-format", "llama-3"]) == 0
    out = capsys.readouterr().out
    assert "<|start_header_id|>user<|end_header_id|>" in out and '"role": "user"' in out


def test_bad_json_input_is_a_clean_exit(capsys: pytest.CaptureFixture[str]) -> None:
    # said as the command line's other mistakes are: one line on stderr, exit status 2
    with pytest.raises(SystemExit) as exited:
        main(["render", "x", "{not json"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith("prompter render: error: invalid JSON in INPUT")


def test_chat_answers_from_stdin(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("hello\nand again\n"))
    assert main(["chat", "--model", str(tiny_model_path), "--max-new-tokens", "4"]) == 0
    out = capsys.readouterr().out
    assert out.count("model> ") == 2


def test_a_mistake_on_the_command_line_is_one_line_and_exit_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    from modules.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["render", "About {topic}.", '{"top": "cats"}'])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err == (
        "prompter render: error: input is missing slot(s): 'topic'; give each a value in the input dict, "
        "e.g. {'topic': ...}\n"
    )


@pytest.mark.parametrize("command", ["serve", "chat"])
def test_serve_and_chat_on_a_folder_that_is_no_model_print_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--model", str(tmp_path)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"prompter {command}: error: "), err
    assert str(tmp_path) in err and "model folder" in err
