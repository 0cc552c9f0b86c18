"""Every 400 names the field at fault (``param``) and says what is wrong with it, through the official client.

Two paths did not: a message the model's own checks refused (a tool call's
arguments that are not a JSON object, a tool call without a function name)
came back with ``param: null``; and a ``tool_choice`` of the wrong JSON type
(``5``, ``true``, ``[]``) was described as "a named function".
"""

from __future__ import annotations

from typing import Any

import openai
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule


def _bad_request(module: TrainableModule, **body: Any) -> dict[str, Any]:
    client = openai.OpenAI(base_url=module.url, api_key="unused", max_retries=0, timeout=60)
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="tiny", max_tokens=1, **body)
    error = raised.value.body
    assert isinstance(error, dict) and set(error) == {"message", "type", "param", "code"}, error
    return error


def _history(function: dict[str, Any]) -> list[dict[str, Any]]:
    call = {"id": "call_1", "type": "function", "function": function}
    return [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]


@pytest.mark.parametrize(
    ("function", "param"),
    [
        # arguments are read as strict JSON by the server itself, which names the field
        # (test_server_tool_call_arguments_must_be_strict_json.py)
        ({"name": "get_weather", "arguments": "not json"}, "messages[1].tool_calls[0].function.arguments"),
        ({"name": "get_weather", "arguments": "[1, 2]"}, "messages[1].tool_calls[0]"),
        ({"name": "", "arguments": "{}"}, "messages[1].tool_calls[0]"),
    ],
    ids=["arguments-not-json", "arguments-not-an-object", "empty-function-name"],
)
def test_a_tool_call_the_model_refuses_names_its_message_as_param(
    served_module: TrainableModule,  # noqa: F811
    function: dict[str, Any],
    param: str,
) -> None:
    error = _bad_request(served_module, messages=_history(function))
    assert error["param"] == param, error
    assert error["message"].startswith(param + ": "), error


@pytest.mark.parametrize(
    ("choice", "said"),
    [(5, "a number"), (1.5, "a number"), (True, "a boolean"), ([], "an array"), (["auto"], "an array")],
    ids=["int", "float", "bool", "empty-list", "list"],
)
def test_a_tool_choice_of_the_wrong_type_is_named_as_such(
    served_module: TrainableModule,  # noqa: F811
    choice: Any,
    said: str,
) -> None:
    error = _bad_request(served_module, messages=[{"role": "user", "content": "hi"}], tool_choice=choice)
    assert error["param"] == "tool_choice", error
    assert error["message"] == f"tool_choice: expected 'auto', 'none' or an object naming a function, got {said}"


def test_a_named_function_tool_choice_is_still_refused_as_unsupported(
    served_module: TrainableModule,  # noqa: F811
) -> None:
    choice = {"type": "function", "function": {"name": "f"}}
    error = _bad_request(served_module, messages=[{"role": "user", "content": "hi"}], tool_choice=choice)
    assert error["param"] == "tool_choice" and "a named function" in error["message"], error
