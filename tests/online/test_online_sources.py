"""The sources table: each provider's defaults, aliases, and where its key comes from."""

from __future__ import annotations

import pytest
from fault_server import FaultServer

from modules import ModuleConfigError, OnlineChatModule
from modules.online.module import Timeout
from modules.online.sources import SOURCES, get_source, resolve_api_key

REQUIRED = {"openai", "deepseek", "qwen", "glm", "kimi", "doubao", "siliconflow", "ollama", "openai-compatible"}


@pytest.fixture(scope="module")
def server():
    """One server for the table: each row sends one request."""
    with FaultServer() as srv:
        yield srv


def test_the_table_has_every_required_provider():
    assert REQUIRED <= set(SOURCES)


# ollama speaks its native /api/chat (tests/online/test_native_ollama.py); its OpenAI-compatible /v1 is "ollama-openai"
OPENAI_DIALECT = sorted(n for n in REQUIRED | {"ollama-openai"} if SOURCES[n].dialect == "openai")


@pytest.mark.parametrize("name", [n for n in OPENAI_DIALECT if n != "openai-compatible"])
def test_each_source_has_defaults_and_reads_its_key_from_its_variable(name, server, monkeypatch):
    source = SOURCES[name]
    assert source.base_url and source.base_url.startswith(("https://", "http://localhost"))
    assert source.default_model
    for var in source.key_env:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(source.key_env[0], f"sk-{name}-from-env")
    m = OnlineChatModule(source=name, base_url=server.base_url)
    assert (m.source, m.model) == (name, source.default_model)
    m("hi")
    assert server.requests[-1].headers["authorization"] == f"Bearer sk-{name}-from-env"
    assert server.requests[-1].json()["model"] == source.default_model


@pytest.mark.parametrize(
    ("alias", "name"),
    [("dashscope", "qwen"), ("zhipu", "glm"), ("moonshot", "kimi"), ("ark", "doubao"), ("DeepSeek", "deepseek")],
)
def test_aliases(alias, name):
    assert get_source(alias) is SOURCES[name]


def test_an_unknown_source_lists_the_known_ones():
    with pytest.raises(ModuleConfigError, match="openai-compatible"):
        get_source("nope")


def test_a_generic_server_needs_only_base_url_and_model(server, monkeypatch):
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    m = OnlineChatModule(base_url=server.base_url, model="local")
    assert m.source == "openai-compatible"
    m("hi")
    assert "authorization" not in server.requests[-1].headers  # no key, no header
    with pytest.raises(ModuleConfigError, match="base_url"):
        OnlineChatModule(source="openai-compatible", model="x")
    with pytest.raises(ModuleConfigError, match="model"):
        OnlineChatModule(base_url=server.base_url)


def test_ollama_needs_no_key(monkeypatch):
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    assert resolve_api_key(SOURCES["ollama"], None) is None
    assert resolve_api_key(SOURCES["openai"], None, env={"OPENAI_API_KEY": "k"}) == "k"
    assert resolve_api_key(SOURCES["openai"], "explicit", env={"OPENAI_API_KEY": "k"}) == "explicit"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, Timeout()), (30, Timeout(connect=5.0, read=30.0, total=30.0)), (2.5, Timeout(2.5, 2.5, 2.5))],
)
def test_timeout_forms(value, expected):
    assert Timeout.of(value) == expected


@pytest.mark.parametrize("bad", [0, -1, "10"])
def test_bad_timeouts_are_refused(bad):
    with pytest.raises(ModuleConfigError, match="timeout"):
        Timeout.of(bad)


def test_bad_base_url_is_refused():
    with pytest.raises(ModuleConfigError, match="http"):
        OnlineChatModule(base_url="ftp://example.com/v1", model="m")


def test_lazyllm_stream_true_in_the_constructor_is_a_typed_error_naming_the_replacement() -> None:
    from modules import ModuleConfigError, OnlineChatModule

    assert OnlineChatModule(model="m", source="openai", base_url="http://127.0.0.1:9/v1", api_key="k", stream=False)
    with pytest.raises(ModuleConfigError, match=r"m\.stream\(input\)"):
        OnlineChatModule(model="m", source="openai", base_url="http://127.0.0.1:9/v1", api_key="k", stream=True)
