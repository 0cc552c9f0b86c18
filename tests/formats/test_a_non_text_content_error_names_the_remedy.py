"""A message content that is neither text nor content parts is refused naming what to send instead.

transformers hands a dict tool result to the template as it is: Qwen 2.5 prints its Python
``repr`` (``{'temp': 21}``), ChatML fails on ``+``, Llama 3.1 writes it with ``tojson``, so no
one text is the template's. prompter refuses it as a ``MessageError``; the message names the
fix, the JSON text of the value, which every template prints as given.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import ModelFormat
from prompter.errors import MessageError

CALL = {"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}


@pytest.mark.parametrize("content", [{"temp": 21}, 21, 2.5, True], ids=["dict", "int", "float", "bool"])
@pytest.mark.parametrize("family", ["qwen2.5", "llama-3.1", "chatml"])
def test_a_structured_tool_result_is_refused_naming_json_text_as_the_remedy(family: str, content: Any) -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call12345", "content": content},
    ]
    with pytest.raises(MessageError) as caught:
        ModelFormat.get(family).render(messages)
    message = str(caught.value)
    assert message.startswith("messages[2].content: expected str")
    assert "json.dumps" in message
