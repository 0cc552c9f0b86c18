"""Text holding a lone surrogate is refused with a typed error that names it, on every way into the tokenizer.

A JSON body may spell ``"\\ud800"``, and a bad decode leaves one in a Python string: that is not
Unicode text, and ``tokenizers`` answered it with a bare ``TypeError`` ("TextInputSequence must be
str"), which the server passed on as its error message. Now the prompt's tokenization refuses it
with :class:`~modules.errors.UnsafeTokenizationError` naming the character and the remedy: in a
chat message (any role), in a plain-text prompt, and over HTTP (400, OpenAI's error envelope).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.errors import UnsafeTokenizationError
from modules.local.trainable import TrainableModule

LONE = ["\ud800", "\udfff", "\ud83d"]  # a high, a low, and the first half of an emoji's pair


@pytest.fixture(scope="module")
def module(tiny_model_path: Path) -> TrainableModule:  # noqa: F811
    return TrainableModule(tiny_model_path, max_new_tokens=2)


@pytest.mark.parametrize("lone", LONE)
@pytest.mark.parametrize("role", ["system", "user"])
def test_a_lone_surrogate_in_a_message_is_a_typed_error_naming_it(module: TrainableModule, lone: str, role: str) -> None:
    messages = [{"role": role, "content": f"before {lone} after"}]
    if role == "system":
        messages.append({"role": "user", "content": "hi"})
    with pytest.raises(UnsafeTokenizationError, match=rf"lone surrogate \(U\+{ord(lone):04X}\).*errors='replace'"):
        module.prepare(messages)
    assert messages[0]["content"] == f"before {lone} after"  # nothing the caller passed is changed


def test_a_lone_surrogate_in_a_plain_prompt_is_a_typed_error(module: TrainableModule) -> None:
    with pytest.raises(UnsafeTokenizationError, match="lone surrogate"):
        module.prepare_text("x\ud800")


def test_a_surrogate_pair_spelled_out_is_plain_text(module: TrainableModule) -> None:
    # the two halves of one character, joined as JSON decodes "\ud83d\ude00": a real emoji, tokenized
    assert module.prepare([{"role": "user", "content": json.loads('"\\ud83d\\ude00"')}]).input_ids


def test_a_lone_surrogate_over_http_is_a_400_naming_it(served_module: TrainableModule) -> None:  # noqa: F811
    body = '{"model": "tiny", "messages": [{"role": "user", "content": "a\\ud800b"}], "max_tokens": 2}'
    response = httpx.post(
        served_module.url + "/chat/completions", content=body, headers={"Content-Type": "application/json"}, timeout=30
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert "lone surrogate (U+D800)" in error["message"]
