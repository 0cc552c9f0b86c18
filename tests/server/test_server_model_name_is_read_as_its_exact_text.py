"""The model id the server answers to is its name's exact text, never what a str subclass's methods say.

``create_app`` compared each request's ``model`` with the ``model_name`` (or the
module's ``name``) it was given, as given: a str subclass whose ``__eq__`` says
yes to everything made the server answer any model id instead of a 404
``model_not_found``. As everywhere in prompter, a str subclass is read as its
exact text; a name that is not a non-empty str is a typed error naming the remedy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from modules.base import Completion, StreamDelta
from modules.errors import ModuleConfigError
from modules.server.app import ServerThread, create_app


class _AgreeableName(str):
    """A name equal to every other: the threat is a server that then answers any model id."""

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = str.__hash__

    def __str__(self) -> str:
        return "not-the-name"

    def __len__(self) -> int:
        return 0


class _Scripted:
    def __init__(self, name: Any) -> None:
        self.name = name

    def prepare(self, messages: Any, tools: Any = None, **generation: Any) -> Any:
        return messages

    def prepare_text(self, prompt: str, **generation: Any) -> Any:
        return prompt

    def generate(self, request: Any, cancel: Any = None) -> Completion:
        return Completion(text="ok", finish_reason="stop", usage={})

    def generate_stream(self, request: Any, cancel: Any = None, usage: Any = None) -> Iterator[StreamDelta]:
        yield StreamDelta(text="ok", finish_reason="stop")


@pytest.mark.parametrize(
    ("module_name", "model_name"),
    [
        pytest.param(_AgreeableName("tiny"), None, id="module-name"),
        pytest.param("unused", _AgreeableName("tiny"), id="model-name"),
    ],
)
def test_a_str_subclass_name_answers_only_its_own_model_id(module_name: Any, model_name: Any) -> None:
    server = ServerThread(create_app(_Scripted(module_name), model_name=model_name)).start()
    try:
        base = server.url + "/v1"
        assert [m["id"] for m in httpx.get(base + "/models", timeout=30).json()["data"]] == ["tiny"]
        assert type(httpx.get(base + "/models", timeout=30).json()["data"][0]["id"]) is str
        for stream in (False, True):
            body = {"model": "another", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
            reply = httpx.post(base + "/chat/completions", json=body, timeout=30)
            assert reply.status_code == 404, reply.text
            assert reply.json()["error"]["code"] == "model_not_found", reply.text
            assert "'tiny'" in reply.json()["error"]["message"], reply.text
        body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}]}
        assert httpx.post(base + "/chat/completions", json=body, timeout=30).json()["model"] == "tiny"
        assert httpx.get(base + "/models/another", timeout=30).status_code == 404
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("module_name", "model_name", "said"),
    [
        pytest.param("tiny", "", "model_name: expected a non-empty str, got an empty str", id="empty-model-name"),
        pytest.param("tiny", 7, "model_name: expected a non-empty str, got int", id="int-model-name"),
        pytest.param(None, None, "the module's name: expected a non-empty str, got NoneType", id="no-module-name"),
        pytest.param(b"tiny", None, "the module's name: expected a non-empty str, got bytes", id="bytes-module-name"),
    ],
)
def test_a_name_that_is_not_a_non_empty_str_is_refused(module_name: Any, model_name: Any, said: str) -> None:
    with pytest.raises(ModuleConfigError) as raised:
        create_app(_Scripted(module_name), model_name=model_name)
    assert str(raised.value).startswith(said) and "pass model_name=" in str(raised.value)
