"""A request with two Content-Type headers that differ is a 400 saying so, whichever comes first.

Content-Type is one field (RFC 9110 section 8.3). The body check read the last of two headers and
FastAPI the first: ``text/plain`` then ``application/json`` passed the check and then failed FastAPI's
with a pydantic message about the body and ``param: null``; the other order was refused as text/plain.
Now two that differ are refused with a message naming both; two identical ones say one thing and are served.
"""

from __future__ import annotations

import http.client
import json
import urllib.parse

import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

BODY = json.dumps({"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}).encode()


def _post(module: TrainableModule, content_types: list[str]) -> tuple[int, dict[str, object]]:
    url = urllib.parse.urlparse(module.url)
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=60)
    try:
        connection.putrequest("POST", url.path + "/chat/completions")
        for value in content_types:
            connection.putheader("Content-Type", value)
        connection.putheader("Content-Length", str(len(BODY)))
        connection.endheaders(BODY)
        reply = connection.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        connection.close()


@pytest.mark.parametrize(
    "content_types",
    [
        ["text/plain", "application/json"],
        ["application/json", "text/plain"],
        ["application/json", "application/json; charset=latin-1"],
    ],
    ids=["text-then-json", "json-then-text", "json-then-json-latin-1"],
)
def test_two_content_types_that_differ_are_refused_naming_both(
    served_module: TrainableModule,  # noqa: F811
    content_types: list[str],
) -> None:
    status, body = _post(served_module, content_types)
    assert status == 400, body
    error = body["error"]
    assert isinstance(error, dict) and error["type"] == "invalid_request_error", error
    message = error["message"]
    assert message.startswith("two Content-Type headers that differ"), error
    assert all(repr(value) in message for value in content_types) and "send one" in message, error


def test_two_identical_content_types_are_served(served_module: TrainableModule) -> None:  # noqa: F811
    status, body = _post(served_module, ["application/json", "application/json"])
    assert status == 200, body
