"""A tool call's ``arguments`` text is read as strict JSON, and a fault in it is a 400 naming the field.

The server promises strict JSON, and a tool call's ``arguments`` is JSON text inside the body, which
the model's template parses with Python's json: ``{"x": NaN}``, ``{"x": 1e999}`` (read as Infinity) and
``{"x": 1, "x": 2}`` (the first value silently dropped) were accepted and reached the prompt as
``NaN``, ``Infinity`` and ``{"x": 2}``. A lone surrogate there (``"\\ud800"`` inside the text) was
refused by the tokenizer as "character 196 of the prompt is a lone surrogate", ``param: null``.
Each is now a 400 with ``param`` ``messages[i].tool_calls[j].function.arguments``, as text that is not
JSON at all is; blank text is ``{}``, as the module reads it.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

PARAM = "messages[2].tool_calls[1].function.arguments"


def _body(arguments: str, stream: bool = False) -> dict[str, Any]:
    calls = [
        {"id": "c0", "type": "function", "function": {"name": "f", "arguments": '{"ok": 1}'}},
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}},
    ]
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c0", "content": "r0"},
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
    ]
    return {"model": "tiny", "messages": messages, "max_tokens": 1, "stream": stream}


NOT_STRICT = [
    pytest.param('{"x": NaN}', "NaN is not a JSON value", id="NaN"),
    pytest.param('{"x": -Infinity}', "-Infinity is not a JSON value", id="minus-Infinity"),
    pytest.param('{"x": [Infinity]}', "Infinity is not a JSON value", id="Infinity-in-a-list"),
    pytest.param('{"x": 1e999}', "1e999 is too large for a float", id="overflowing-number"),
    pytest.param('{"x": 1, "x": 2}', "the key 'x' appears twice", id="duplicate-key"),
    pytest.param('{"x": {"y": 1, "y": 1}}', "the key 'y' appears twice", id="duplicate-key-nested"),
    pytest.param("{not json", "invalid JSON", id="not-json"),
]


@pytest.mark.parametrize(("arguments", "said"), NOT_STRICT)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_arguments_that_are_not_strict_json_are_refused_naming_the_field(
    served_module: TrainableModule,  # noqa: F811
    arguments: str,
    said: str,
    stream: bool,
) -> None:
    reply = httpx.post(served_module.url + "/chat/completions", json=_body(arguments, stream), timeout=60)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == PARAM, error
    assert error["message"].startswith(PARAM + ": ") and said in error["message"], error
    assert "strict JSON" in error["message"], error


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ('{"x": "\\ud800"}', PARAM + ".x: a lone surrogate (U+D800)"),
        ('{"x": ["ok", "a\\udfff"]}', PARAM + ".x[1]: a lone surrogate (U+DFFF)"),
        ('{"\\ud83d": 1}', PARAM + ": the key"),
    ],
    ids=["in-a-value", "in-a-list", "in-a-key"],
)
def test_a_lone_surrogate_inside_the_arguments_is_refused_naming_the_field(
    served_module: TrainableModule,  # noqa: F811
    arguments: str,
    where: str,
) -> None:
    reply = httpx.post(served_module.url + "/chat/completions", json=_body(arguments), timeout=60)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == PARAM, error
    assert error["message"].startswith(where) and "not Unicode text" in error["message"], error
    assert "prompt" not in error["message"], error


@pytest.mark.parametrize(
    "arguments",
    ['{"x": 1.5e300, "y": [true, null], "z": "\\ud83d\\ude00"}', "", "  ", "{}"],
    ids=["strict-json-with-a-surrogate-pair", "empty", "blank", "empty-object"],
)
def test_strict_json_arguments_are_served(served_module: TrainableModule, arguments: str) -> None:  # noqa: F811
    reply = httpx.post(served_module.url + "/chat/completions", json=_body(arguments), timeout=60)
    assert reply.status_code == 200, reply.text
