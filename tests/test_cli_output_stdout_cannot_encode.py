"""``prompter render`` / ``view`` output that stdout cannot write: a lone surrogate from a JSON ``"\\ud800"`` escape
in the input, or a terminal whose encoding is not UTF-8. A JSON body stays the same JSON (``\\u`` escapes); a
text prompt is one line naming the character and the remedy, exit status 2, no traceback and no half output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LONE_SURROGATE_INPUT = '{"x": "a\\ud800b"}'  # valid JSON; its string holds U+D800, no Unicode character


def _prompter(*argv: str, encoding: str = "utf-8") -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": encoding}
    return subprocess.run(
        [sys.executable, "-m", "modules.cli", *argv], capture_output=True, env=env, timeout=120, check=False
    )


@pytest.mark.parametrize("command", ["render", "view"])
def test_a_lone_surrogate_in_a_text_prompt_is_one_line_naming_it_not_a_traceback(command: str) -> None:
    done = _prompter(command, "Hi {x}", LONE_SURROGATE_INPUT)
    err = done.stderr.decode()
    assert "Traceback" not in err, err[-2000:]
    assert done.returncode == 2
    assert err.count("\n") == 1, err
    assert err.startswith(f"prompter {command}: error: "), err
    assert "lone surrogate (U+D800)" in err and "remove it from the input" in err, err
    assert done.stdout == b""  # nothing half printed


def test_a_lone_surrogate_in_a_json_body_is_printed_as_the_same_json_with_escapes() -> None:
    done = _prompter("render", "Hi {x}", LONE_SURROGATE_INPUT, "--format", "openai")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    body = json.loads(done.stdout.decode("ascii"))
    assert body["messages"][0]["content"].endswith("Hi a\ud800b\n\n")


def test_a_terminal_that_is_not_utf8_gets_json_escapes_and_the_remedy_for_text() -> None:
    body = _prompter("render", "Hi", "héllo ☃", "--format", "anthropic", encoding="ascii")
    assert body.returncode == 0, body.stderr.decode()[-2000:]
    assert json.loads(body.stdout.decode("ascii"))["messages"][-1]["content"] == "héllo ☃"
    text = _prompter("render", "Hi", "héllo", encoding="ascii")
    err = text.stderr.decode()
    assert "Traceback" not in err and text.returncode == 2, err[-2000:]
    assert err.startswith("prompter render: error: stdout's encoding (ascii) cannot write character "), err
    assert "PYTHONIOENCODING=utf-8" in err, err
