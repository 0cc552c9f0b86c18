"""JSON text a caller hands over that Python's json module cannot read ends in a PromptError, never its own.

Tool-call ``arguments`` given as a JSON string are parsed, and Gemini's dialect parses a tool
result's text to send it as an object. Valid JSON can still break ``json.loads`` (a number over
the 4,300-digit int limit raises ``ValueError``; deep nesting raises ``RecursionError``), and
arguments parsed a few hundred levels deep broke the dialects that copy them recursively.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from prompter import ChatPrompter
from prompter.errors import MessageError

FORMATS: list[tuple[str | None, str | None]] = [
    (None, None), ("openai", None), ("anthropic", None), ("gemini", None), ("ollama", None),
    ("ollama_generate", None), ("dashscope", None), ("zhipu", None), (None, "qwen2.5"),
]


def _history(arguments: Any, result: str = "ok") -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    return [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
    ]


def _nested(depth: int) -> str:
    return '{"a": ' + "[" * depth + "]" * depth + "}"


UNREADABLE = {
    "a 5,000-digit number": '{"a": 1' + "1" * 5000 + "}",
    "100,000 levels": _nested(100_000),
    "3,000 levels": _nested(3_000),
    "500 levels": _nested(500),
    "101 levels": _nested(100),
}


@pytest.mark.parametrize("fmt, model_format", FORMATS)
@pytest.mark.parametrize("case", list(UNREADABLE))
def test_unreadable_argument_text_is_a_message_error_naming_the_call(
    case: str, fmt: str | None, model_format: str | None
) -> None:
    with pytest.raises(MessageError, match=r"history\[1\]\.tool_calls\[0\]"):
        ChatPrompter("x").generate_prompt("hi", history=_history(UNREADABLE[case]), format=fmt, model_format=model_format)


@pytest.mark.parametrize("fmt, model_format", FORMATS)
def test_argument_text_within_the_depth_limit_still_renders(fmt: str | None, model_format: str | None) -> None:
    arguments = _nested(99)  # the object and 99 lists: 100 levels
    body = ChatPrompter("x").generate_prompt("hi", history=_history(arguments), format=fmt, model_format=model_format)
    assert body


def test_gemini_sends_a_tool_result_it_cannot_parse_as_text() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    body = ChatPrompter("x").generate_prompt("hi", history=_history("{}", deep), format="gemini")
    responses = [part["functionResponse"] for turn in body["contents"] for part in turn["parts"] if "functionResponse" in part]
    assert responses == [{"name": "f", "response": {"content": deep}}]
    assert json.loads(json.dumps(body))  # still a JSON body
