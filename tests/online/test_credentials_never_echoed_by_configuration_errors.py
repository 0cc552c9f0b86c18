"""Threat: a credential a caller hands to the module comes back in a configuration error, a ``repr``,
or a pickle, before any server is involved.

- A ``base_url`` (or ``OPENAI_BASE_URL``, ``OLLAMA_HOST``...) holding ``user:password@`` that
  ``urlsplit`` does not read as user info (no scheme, one slash, backslashes) was echoed whole
  by the "must start with http" error; an unparsable ``OLLAMA_HOST`` was echoed whole.
- A ``base_url`` whose port or IPv6 host cannot be read raised a bare ``ValueError``, at the
  first call for a port, showing the text.
- A header line given as a header *name* (``{"Authorization: Bearer sk-...": ...}``) was shown
  in the "not a header name" error.
- A credential in a header whose name says so (``X-Auth-Token``, ``Ocp-Apim-Subscription-Key``,
  ``apikey``, ``Cookie``...) was shown by ``repr`` of the request and never scrubbed.
- ``pickle.dumps(module)`` failed with ``cannot pickle '_thread.lock' object``, which says
  neither why nor what to do; it is refused by name (the key is never written out), and
  ``share()`` / ``with_options()`` still give handles on the same backend.
"""

from __future__ import annotations

import copy
import pickle

import pytest

from modules import OnlineChatModule
from modules.errors import ModuleConfigError

PASSWORD = "hunter2-Pa55word-Zq9"
KEY = "sk-canary-0123456789abcdefXYZ"


@pytest.mark.parametrize(
    "base_url",
    [
        f"user:{PASSWORD}@api.example.com/v1",
        f"https:/user:{PASSWORD}@api.example.com/v1",
        f"http:\\\\user:{PASSWORD}@api.example.com/v1",
        f"api.example.com/v1?key={PASSWORD}",
        f"HTTPS//user:{PASSWORD}@api.example.com/v1",
    ],
    ids=["no-scheme", "one-slash", "backslashes", "no-scheme-query", "no-colon"],
)
def test_a_malformed_base_url_holding_a_password_is_refused_without_echoing_it(base_url: str) -> None:
    with pytest.raises(ModuleConfigError) as info:
        OnlineChatModule(base_url=base_url, model="m")
    assert PASSWORD not in str(info.value) and PASSWORD not in repr(info.value.args)
    assert "base_url" in str(info.value)


def test_a_base_url_from_the_environment_holding_a_password_is_not_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"user:{PASSWORD}@api.example.com/v1")
    with pytest.raises(ModuleConfigError) as info:
        OnlineChatModule(source="openai", api_key=KEY)
    assert PASSWORD not in str(info.value)


def test_an_unparsable_ollama_host_holding_a_password_is_not_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"http://user:{PASSWORD}@host:port")
    with pytest.raises(ModuleConfigError) as info:
        OnlineChatModule(source="ollama", model="llama3.2")
    assert PASSWORD not in str(info.value) and "OLLAMA_HOST" in str(info.value)


@pytest.mark.parametrize(
    "base_url", [f"http://host:{PASSWORD}/v1", f"http://[::1/{PASSWORD}/v1"], ids=["port", "ipv6"]
)
def test_a_base_url_whose_host_or_port_cannot_be_read_is_a_typed_error_at_once(base_url: str) -> None:
    with pytest.raises(ModuleConfigError) as info:
        OnlineChatModule(base_url=base_url, model="m", api_key=KEY)
    assert PASSWORD not in str(info.value) and "base_url" in str(info.value)


def test_a_header_line_given_as_a_name_is_refused_without_showing_the_key() -> None:
    for make in (
        lambda: OnlineChatModule(base_url="http://h/v1", model="m", headers={f"Authorization: Bearer {KEY}": ""}),
        lambda: OnlineChatModule(base_url="http://h/v1", model="m").with_options(headers={f"x-api-key {KEY}": "v"}),
    ):
        with pytest.raises(ModuleConfigError) as info:
            make()
        assert KEY not in str(info.value) and "header name" in str(info.value)


@pytest.mark.parametrize(
    "name",
    ["X-Auth-Token", "Ocp-Apim-Subscription-Key", "apikey", "X-Custom-Secret", "Private-Token", "X-DashScope-ApiKey"],
    ids=lambda n: n,
)
def test_a_custom_credential_header_is_masked_in_every_repr(name: str) -> None:
    m = OnlineChatModule(base_url="http://h/v1", model="m", headers={name: KEY})
    for shown in (m.build_request("hi"), m.share().build_request("hi"), m.with_options(timeout=3).build_request("x")):
        assert KEY not in repr(shown) and KEY not in str(shown)
        assert shown.headers[name] == KEY  # sent as given


def test_each_cookie_value_and_a_basic_password_are_scrubbed() -> None:
    import base64

    basic = "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    m = OnlineChatModule(base_url="http://h/v1", model="m", headers={"Authorization": basic, "Cookie": f"s={KEY}; x=1"})
    text = m._scrubber.text(f"password {PASSWORD} and session {KEY}")
    assert PASSWORD not in text and KEY not in text


def test_pickling_a_module_is_refused_by_name_and_handles_still_share_the_backend() -> None:
    m = OnlineChatModule(base_url="http://h/v1", model="m", api_key=KEY)
    for attempt in (lambda: pickle.dumps(m), lambda: copy.deepcopy(m)):
        with pytest.raises(TypeError) as info:
            attempt()
        assert "cannot be pickled" in str(info.value) and "share()" in str(info.value)
        assert KEY not in str(info.value)
    twin, other = m.share("Be brief."), m.with_options(max_retries=0)
    assert twin._backend is m._backend and other._backend is m._backend
    assert twin.prompter is not m.prompter and other.retry.max_retries == 0 and m.retry.max_retries == 2


def test_a_key_shorter_than_four_characters_does_not_mask_every_error() -> None:
    """A 1-character key would turn every 'a' of a message into '***': it is sent, but not scrubbed."""
    m = OnlineChatModule(base_url="http://h/v1", model="m", api_key="a")
    assert m._scrubber.text("a bad request") == "a bad request"
    assert "'***'" in repr(m)
