"""Threat: a caller's own credential header (``headers={"Authorization": ...}``) shown by a request's repr.

``build_request()`` hands back a plain value a program may log or print; its repr showed
every header as given. The module's own key never rides in it, but a key the caller put in
``headers=`` (a proxy's token, an Azure ``api-key``) did. Credential headers show as ``***``;
the request itself still carries them to the wire.
"""

from __future__ import annotations

import pytest

from modules import OnlineChatModule
from modules.testing import FakeOpenAIServer

SECRET = "sk-caller-0123456789abcdef"


@pytest.mark.parametrize(
    ("name", "value"),
    [("Authorization", f"Bearer {SECRET}"), ("api-key", SECRET), ("X-API-Key", SECRET),
     ("Proxy-Authorization", f"Basic {SECRET}"), ("x-goog-api-key", SECRET)],
)  # fmt: skip
def test_a_request_repr_never_shows_a_credential_header(name: str, value: str) -> None:
    with FakeOpenAIServer(replies=["ok"]) as server:
        m = OnlineChatModule(base_url=server.base_url, model="fake-model", headers={name: value, "X-Title": "demo"})
        request = m.build_request("hi")
        assert SECRET not in repr(request) and SECRET not in str(request)
        assert "X-Title" in repr(request) and "demo" in repr(request)
        assert request.headers[name] == value  # still sent as given
        m(request.body["messages"][-1]["content"])
        assert server.requests[0].headers[name.lower()] == value
