"""An unknown key the client sent is named as sent in the 400's ``param``, whatever it looks like.

``describe_invalid`` drops the parts of pydantic's error location that name a union's branch
(``str``, ``list[ContentPart]``), and took any capitalised part, or ``str``/``int``/``list``/``dict``,
for one: ``stream_options: {"Include_usage": true}`` (a wrong-case key, the mistake most worth naming)
came back as ``param: "stream_options"``, the key itself gone. A key the client sent is never a
branch name: it is kept; the branch names are still dropped (test_server_wire_shapes.py).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

BODIES: dict[str, dict[str, Any]] = {
    "/chat/completions": {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2},
    "/completions": {"model": "tiny", "prompt": "hi", "max_tokens": 2},
}


@pytest.mark.parametrize("key", ["Include_usage", "IncludeUsage", "str", "int", "list", "dict", "list[str]", "body"])
@pytest.mark.parametrize("path", sorted(BODIES))
def test_an_unknown_stream_options_key_is_named_as_sent(
    served_module: TrainableModule,  # noqa: F811
    path: str,
    key: str,
) -> None:
    body = {**BODIES[path], "stream": True, "stream_options": {key: True}}
    reply = httpx.post(served_module.url + path, json=body, timeout=30)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error", error
    assert error["param"] == f"stream_options.{key}", error
    assert error["message"].startswith(f"stream_options.{key}: "), error


def test_a_branch_name_is_still_kept_out_of_param(served_module: TrainableModule) -> None:  # noqa: F811
    # content is a string or a list of parts: a number fails both branches, named at the field alone
    body = {**BODIES["/chat/completions"], "messages": [{"role": "user", "content": 5}]}
    reply = httpx.post(served_module.url + "/chat/completions", json=body, timeout=30)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == "messages.0.content", reply.text
