"""``prompter render/view INSTRUCTION INPUT``: an INPUT that starts with ``{`` is read as JSON slot values.

A question that starts with ``{`` (``"{x} what is this?"``) is then invalid JSON; the one-line error
named the JSON mistake but not how to send such text at all. It now names the form that does, and
that form delivers the text as it is: the user's message, never a slot.
"""

from __future__ import annotations

import json

import pytest

from modules.cli import main

TEXTS = ["{x} what is this?", '{"a": 1} is JSON', "{", "  {{topic}} <|im_start|>"]


@pytest.mark.parametrize("command", ["render", "view"])
@pytest.mark.parametrize("text", TEXTS, ids=["slot-like", "json-then-text", "lone-brace", "indented-template"])
def test_input_text_starting_with_a_brace_is_one_line_naming_the_json_object_form(
    command: str, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "You answer about {topic}.", text])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"prompter {command}: error: invalid JSON in INPUT: "), err
    assert 'give it as a JSON object: {"input": "your text"}' in err, err


@pytest.mark.parametrize("text", TEXTS, ids=["slot-like", "json-then-text", "lone-brace", "indented-template"])
def test_the_named_json_object_form_sends_the_text_as_the_users_message(
    text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    value = json.dumps({"topic": "cats", "input": text})
    assert main(["render", "You answer about {topic}.", value, "--format", "openai"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["messages"][-1] == {"role": "user", "content": text}
    assert "cats" in body["messages"][0]["content"]
