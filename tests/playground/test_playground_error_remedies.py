"""A field the playground cannot read gets a typed 400 that says what is wrong AND what to write instead.

Before, invalid JSON came back as the parser's words alone (``history: invalid JSON: Expecting value:
line 1 column 3 (char 2)``) and a non-text value as ``expected text, got int``: the page said where,
never how to fix it. Python-style quotes in a history, and text that happens to start with ``{`` in
the input (read as a JSON object of slot values, as ``prompter render`` reads it), are the mistakes
people make; the remedy names the form that works, and that form does work.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from prompter import ChatPrompter


def _error(base: str, state: dict[str, Any]) -> dict[str, Any]:
    response = requests.post(base + "api/render", json={"state": state}, timeout=30)
    assert response.status_code == 400, response.text[:300]
    error: dict[str, Any] = response.json()["error"]
    return error


@pytest.mark.parametrize(
    ("field", "text", "remedy"),
    [
        ("history", "[['q', 'a']]", '[["question", "answer"], ...]'),
        ("history", '[["q", "a"],]', '{"role": "user", "content": "..."}'),
        ("tools", "[{'type': 'function'}]", '[{"type": "function", "function": {"name": "...",'),
        ("input", "{not json", '{"input": "..."}'),
    ],
    ids=["history-python-quotes", "history-trailing-comma", "tools-python-quotes", "input-brace-text"],
)
def test_invalid_json_says_what_to_write_instead(playground_url: str, field: str, text: str, remedy: str) -> None:
    state = {"input": "hi", field: text}
    error = _error(playground_url, state)
    assert (error["type"], error["field"]) == ("FieldError", field)
    assert error["message"].startswith(f"{field}: invalid JSON: ")
    assert "double quotes" in error["message"] and remedy in error["message"], error["message"]


def test_the_input_remedy_names_the_templates_own_slot_and_that_form_renders_the_text(playground_url: str) -> None:
    text = "{x} is a placeholder, what does it mean?"
    error = _error(playground_url, {"instruction": "You answer about {topic}.", "input": text})
    assert error["field"] == "input" and '{"topic": "..."}' in error["message"], error["message"]

    fixed = {"instruction": "You answer about {topic}.", "input": json.dumps({"topic": text})}
    answer = requests.post(playground_url + "api/render", json={"state": fixed}, timeout=30).json()
    assert answer["output"] == ChatPrompter("You answer about {topic}.").generate_prompt(text)


@pytest.mark.parametrize("value", [5, ["hi"], {"input": "hi"}, True], ids=["int", "list", "dict", "bool"])
def test_a_field_that_is_not_text_says_to_send_text(playground_url: str, value: Any) -> None:
    error = _error(playground_url, {"input": value})
    assert (error["type"], error["field"]) == ("FieldError", "input")
    assert error["message"].startswith("input: expected text, got ")
    assert "send each field's value as a JSON string" in error["message"], error["message"]
