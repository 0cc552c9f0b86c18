"""``m.build_request(...)`` returns "a plain value (URL, headers without the key, JSON body)". Its headers
were the module's read-only mapping, so ``copy.deepcopy(request)`` and ``dataclasses.asdict(request)``
raised ``TypeError: cannot pickle 'mappingproxy' object``, and pickling it failed with that same message
instead of the documented reason (the scrubber it carries holds the key)."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from modules import OnlineChatModule

KEY = "sk-copy-canary-0123456789"
SOURCES = [
    ("openai-compatible", {"base_url": "http://127.0.0.1:9/v1", "model": "m"}),
    ("anthropic", {}),
    ("gemini", {"model": "gemini-2.5-flash"}),
    ("ollama", {"model": "llama3.2"}),
]


@pytest.mark.parametrize(("source", "kw"), SOURCES, ids=[s for s, _ in SOURCES])
def test_a_built_request_deep_copies_and_converts_to_a_dict_without_the_key(source: str, kw: dict) -> None:
    m = OnlineChatModule(source, api_key=KEY, **kw)
    request = m.build_request("hi", history=[["a", "b"]], max_tokens=5)
    twin = copy.deepcopy(request)
    assert twin == request and twin.body is not request.body
    twin.headers["X-Extra"] = "1"  # a copy of its own: neither the request nor the module changes
    assert "X-Extra" not in request.headers and "X-Extra" not in m.build_request("hi").headers
    plain = dataclasses.asdict(request)
    assert plain["url"] == request.url and plain["body"] == request.body
    assert KEY not in repr(plain) and KEY not in repr(twin)


def test_pickling_a_built_request_says_it_holds_the_key() -> None:
    m = OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m", api_key=KEY)
    with pytest.raises(TypeError, match="holds the API key") as info:
        pickle.dumps(m.build_request("hi"))
    assert KEY not in str(info.value)
