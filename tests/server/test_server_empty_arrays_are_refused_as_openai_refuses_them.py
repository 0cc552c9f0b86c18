"""An empty array where the API takes one (``tools``, a message's ``tool_calls`` or ``content``) is a 400.

OpenAI refuses each with ``invalid_request_error`` ("empty array. Expected an
array with minimum length 1"), naming the field; the server served all three,
so a client tested against it would break on the real API. An empty *string*
content stays valid, as it is there.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

USER = {"role": "user", "content": "hi"}
ASKED = {"role": "assistant", "content": None, "tool_calls": []}

CASES = [
    pytest.param({"messages": [USER], "tools": []}, "tools", id="tools"),
    pytest.param({"messages": [{"role": "user", "content": []}]}, "messages.0.content", id="user-content"),
    pytest.param({"messages": [USER, ASKED, USER]}, "messages.1.tool_calls", id="tool-calls"),
    pytest.param({"messages": [{"role": "system", "content": []}, USER]}, "messages.0.content", id="system-content"),
]


def _post(module: TrainableModule, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{module.url}/chat/completions", json={"model": "tiny", "max_tokens": 1, **body}, timeout=60)


@pytest.mark.parametrize(("body", "param"), CASES)
def test_an_empty_array_is_a_400_naming_its_field(
    served_module: TrainableModule,  # noqa: F811
    body: dict[str, Any],
    param: str,
) -> None:
    answer = _post(served_module, body)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert "at least 1" in error["message"], error["message"]


@pytest.mark.parametrize("stream", [False, True])
def test_an_empty_string_content_and_absent_arrays_are_still_served(
    served_module: TrainableModule,  # noqa: F811
    stream: bool,
) -> None:
    body = {"messages": [{"role": "system", "content": ""}, USER], "tools": None, "stream": stream}
    answer = _post(served_module, body)
    assert answer.status_code == 200, answer.text
