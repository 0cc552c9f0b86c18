"""Threat: a server (or anything on the path to it) answers with a redirect to another origin, so that
the next request -- with the API key in whatever header the source sends it -- goes to a host the
caller never chose.

Two real loopback servers on two ports are two origins (scheme, host and port). The first answers
every request with a redirect naming the second; the second records what reaches it. For every
source, every auth header that source sends and every secret header a caller may add, every redirect
status, and any path and query in ``Location``: the other origin receives nothing at all (no key,
no conversation), and the call raises :class:`CrossOriginRedirectError` naming the other origin and
the remedy. A redirect within the same origin (307/308) is followed, key included.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules import OnlineChatModule
from modules.errors import APIStatusError
from modules.online import CrossOriginRedirectError
from modules.online.redirects import same_origin
from modules.online.sources import SOURCES
from modules.testing import LoopbackServer, RecordedRequest, write_response

KEY = "sk-canary-redirect-0123456789"
OTHER = "other-canary-secret-9876543210"

#: Each source's root path as its SDK takes it (native sources: the provider root; the rest: .../v1).
NATIVE = {name for name, s in SOURCES.items() if s.dialect != "openai"}

#: Every header we may send a secret in: the sources' own (Authorization, x-api-key, x-goog-api-key)
#: and the ones a caller may add with headers= (Azure-style api-key, a proxy's credentials).
SECRET_HEADERS = ["Authorization", "x-api-key", "x-goog-api-key", "api-key", "Proxy-Authorization"]


class Origins:
    """Origin A answers with ``self.status`` redirecting to ``self.target`` (on origin B by default)."""

    def __init__(self) -> None:
        self.status = 307
        self.location = "/"
        self.a = LoopbackServer(self._redirect)
        self.b = LoopbackServer(self._answer)
        self.b_seen: list[RecordedRequest] = []
        self._lock = threading.Lock()

    def root(self, server: LoopbackServer, source: str) -> str:
        base = f"http://127.0.0.1:{server.port}"
        return base if source in NATIVE else base + "/v1"

    def _redirect(self, request: RecordedRequest, sock: socket.socket) -> bool:
        if request.path.startswith("/same-origin"):
            write_response(sock, 200, {"choices": [{"message": {"role": "assistant", "content": "same"}}]})
            return True
        write_response(sock, self.status, b"", {"Location": self.location, "Content-Type": "text/plain"})
        return True

    def _answer(self, request: RecordedRequest, sock: socket.socket) -> bool:
        with self._lock:
            self.b_seen.append(request)
        write_response(sock, 200, {"choices": [{"message": {"role": "assistant", "content": "hijacked"}}]})
        return True


@pytest.fixture(scope="module")
def origins() -> Iterator[Origins]:
    """Two loopback servers, two origins: A redirects, B records."""
    o = Origins()
    o.a.start()
    o.b.start()
    try:
        yield o
    finally:
        o.a.stop()
        o.b.stop()


def _seen_anywhere(secret: str, requests: list[RecordedRequest]) -> bool:
    return any(secret in json.dumps(r.headers) or secret.encode() in r.body or secret in r.path for r in requests)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    source=st.sampled_from(sorted(SOURCES)),
    header=st.sampled_from(SECRET_HEADERS),
    casing=st.sampled_from([str, str.lower, str.upper]),
    status=st.sampled_from([301, 302, 303, 307, 308]),
    path=st.text("abcdefghijklmnopqrstuvwxyz0123456789-._~%", max_size=12),
    query=st.text("abcdefghijklmnopqrstuvwxyz0123456789=&", max_size=12),
    stream=st.booleans(),
)
def test_a_redirect_to_another_origin_never_carries_a_key_or_the_conversation(
    origins, source, header, casing, status, path, query, stream
):
    origins.status = status
    origins.location = f"{origins.root(origins.b, source)}/{path}?{query}"
    before = len(origins.b_seen)
    m = OnlineChatModule(
        source=source,
        model="m",
        base_url=origins.root(origins.a, source),
        api_key=KEY,
        headers={casing(header): OTHER},
        max_retries=0,
    )
    with m, pytest.raises(CrossOriginRedirectError) as info:
        if stream:
            list(m.stream("the secret plan"))
        else:
            m("the secret plan")
    seen = origins.b_seen[before:]
    assert seen == [], f"{len(seen)} request(s) reached the other origin"
    assert not _seen_anywhere(KEY, origins.b_seen) and not _seen_anywhere(OTHER, origins.b_seen)
    error = info.value
    assert isinstance(error, APIStatusError) and error.status_code == status
    assert f"127.0.0.1:{origins.b.port}" in str(error) and "base_url" in str(error)
    assert KEY not in str(error) and OTHER not in str(error)
    assert "?" not in error.location  # a query string is where a token would hide: never shown


def test_a_redirect_echoing_the_key_in_its_location_is_masked_in_the_error(origins):
    origins.status = 307
    origins.location = f"http://127.0.0.1:{origins.b.port}/{KEY}?k={KEY}"
    m = OnlineChatModule(base_url=origins.root(origins.a, "openai"), model="m", api_key=KEY, max_retries=0)
    with m, pytest.raises(CrossOriginRedirectError) as info:
        m("hi")
    assert KEY not in str(info.value) and KEY not in repr(info.value.location)


@pytest.mark.parametrize("status", [307, 308])
@pytest.mark.parametrize("source", ["openai", "anthropic", "gemini", "ollama"])
def test_a_redirect_within_the_same_origin_is_followed_with_the_key(origins, source, status):
    origins.status = status
    origins.location = "/same-origin"
    seen_before = len(origins.a.requests)
    m = OnlineChatModule(source=source, model="m", base_url=origins.root(origins.a, source), api_key=KEY)
    with m:
        m.build_request("hi")  # the request is valid for the source
        try:
            m("hi")
        except APIStatusError:  # the answer is OpenAI-shaped, a native source may refuse its shape
            pytest.fail("a same-origin redirect must be followed")
        except Exception:  # noqa: BLE001,S110 - only whether it was followed matters here
            pass
    hops = origins.a.requests[seen_before:]
    assert [r.path for r in hops][-1] == "/same-origin"
    assert all(r.method == "POST" and r.body == hops[0].body for r in hops)
    assert any(KEY in value for value in hops[-1].headers.values())


def test_a_redirect_within_the_same_origin_but_turning_post_into_get_is_refused(origins):
    origins.status = 303
    origins.location = "/same-origin"
    m = OnlineChatModule(base_url=origins.root(origins.a, "openai"), model="m", api_key=KEY, max_retries=0)
    with m, pytest.raises(CrossOriginRedirectError, match="303"):
        m("hi")


def test_a_redirect_loop_within_the_origin_ends_with_a_typed_error(origins):
    origins.status = 307
    origins.location = "/v1/chat/completions"
    m = OnlineChatModule(base_url=origins.root(origins.a, "openai"), model="m", api_key=KEY, max_retries=0)
    with m, pytest.raises(CrossOriginRedirectError, match="redirects"):
        m("hi")


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("https://api.x.com/v1", "https://api.x.com/other", True),
        ("https://api.x.com/v1", "https://API.X.COM:443/v1", True),
        ("http://api.x.com/v1", "http://api.x.com:80/v1", True),
        ("https://api.x.com/v1", "http://api.x.com/v1", False),  # a downgrade to cleartext
        ("https://api.x.com/v1", "https://api.x.com:8443/v1", False),
        ("https://api.x.com/v1", "https://evil.x.com/v1", False),
        ("https://api.x.com/v1", "https://api.x.com.evil.com/v1", False),
        ("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1", False),
        ("https://api.x.com/v1", "https://user@api.x.com/v1", False),  # credentials in the target
    ],
)
def test_what_counts_as_the_same_origin(a, b, same):
    assert same_origin(a, b) is same
