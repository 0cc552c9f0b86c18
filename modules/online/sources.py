"""The providers OnlineChatModule knows: endpoint, wire dialect, default model, where the key comes from.

Most sources speak the OpenAI chat-completions dialect at
``{base_url}/chat/completions`` with ``Authorization: Bearer <key>``; they
differ only in data, so adding one is adding a row to :data:`SOURCES`.
``anthropic``, ``gemini`` and ``ollama`` speak their provider's native
protocol (see :mod:`modules.online.dialects`); their ``base_url`` is the
provider root exactly as its official SDK takes it (no ``/v1``).

=================  ==========================================================  =======================
source (aliases)   default base URL                                            key from
=================  ==========================================================  =======================
openai             https://api.openai.com/v1                                   OPENAI_API_KEY
deepseek           https://api.deepseek.com/v1                                 DEEPSEEK_API_KEY
qwen (dashscope)   https://dashscope.aliyuncs.com/compatible-mode/v1           DASHSCOPE_API_KEY
glm (zhipu)        https://open.bigmodel.cn/api/paas/v4                        ZHIPUAI_API_KEY
kimi (moonshot)    https://api.moonshot.cn/v1                                  MOONSHOT_API_KEY
doubao (ark)       https://ark.cn-beijing.volces.com/api/v3                    ARK_API_KEY
siliconflow        https://api.siliconflow.cn/v1                               SILICONFLOW_API_KEY
ollama             http://localhost:11434 (native /api/chat; /api/generate     (no key needed)
                   with format="ollama_generate")
ollama-openai      http://localhost:11434/v1                                   (no key needed)
anthropic          https://api.anthropic.com (native /v1/messages)             ANTHROPIC_API_KEY
gemini (google)    https://generativelanguage.googleapis.com (native)          GOOGLE_API_KEY, GEMINI_API_KEY
openai-compatible  (you pass base_url)                                         (optional)
=================  ==========================================================  =======================

The base URL, when ``base_url=`` is not given, comes from the variable each
provider's SDK reads (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``,
``GOOGLE_GEMINI_BASE_URL``, ``OLLAMA_HOST``), else the default above.

The environment is read here (and only in ``modules/``), when a module is
built, never by the prompter.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from modules.errors import ModuleConfigError

__all__ = [
    "SOURCES",
    "Source",
    "check_secret",
    "choose_format",
    "get_source",
    "is_source",
    "resolve_api_key",
    "resolve_base_url",
    "shown_url",
]


@dataclass(frozen=True)
class Source:
    """One provider's defaults."""

    name: str
    """The canonical name, e.g. ``"qwen"``."""
    base_url: str | None
    """The OpenAI-compatible API root (``.../v1``); None when the caller must give one."""
    default_model: str | None
    """The model used when none is given; None when the caller must give one."""
    key_env: tuple[str, ...] = ()
    """Environment variables the API key is read from, first set wins."""
    key_required: bool = True
    """False for local servers (ollama, generic compatible servers) that accept any key."""
    aliases: tuple[str, ...] = ()
    """Other names accepted for ``source=``."""
    dialect: str = "openai"
    """The wire protocol: ``"openai"`` (chat completions), ``"anthropic"``, ``"gemini"`` or ``"ollama"``."""
    base_url_env: tuple[str, ...] = ()
    """Environment variables the base URL is read from when ``base_url=`` is not given, first set wins."""
    formats: tuple[str, ...] = ()
    """Other prompter formats the source can send (``format=``), each to its own endpoint: Ollama's
    ``"ollama_generate"`` goes to ``/api/generate``. The source's own ``dialect`` is always one."""
    stream_usage: bool = False
    """Whether an OpenAI-compatible stream asks for usage (``stream_options.include_usage``): only where
    the provider documents it, since a server that does not know the field may refuse the request."""


SOURCES: Mapping[str, Source] = {
    s.name: s
    for s in (
        Source(
            "openai", "https://api.openai.com/v1", "gpt-4o-mini", ("OPENAI_API_KEY",),
            base_url_env=("OPENAI_BASE_URL",),
            stream_usage=True,
        ),
        Source("deepseek", "https://api.deepseek.com/v1", "deepseek-chat", ("DEEPSEEK_API_KEY",), stream_usage=True),
        Source(
            "qwen",
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "qwen-plus",
            ("DASHSCOPE_API_KEY", "QWEN_API_KEY"),
            aliases=("dashscope", "tongyi"),
            stream_usage=True,
        ),
        Source(
            "glm",
            "https://open.bigmodel.cn/api/paas/v4",
            "glm-4-flash",
            ("ZHIPUAI_API_KEY", "GLM_API_KEY"),
            aliases=("zhipu", "zhipuai"),
        ),
        Source(
            "kimi",
            "https://api.moonshot.cn/v1",
            "moonshot-v1-8k",
            ("MOONSHOT_API_KEY", "KIMI_API_KEY"),
            aliases=("moonshot",),
        ),
        Source(
            "doubao",
            "https://ark.cn-beijing.volces.com/api/v3",
            "doubao-1-5-pro-32k-250115",
            ("ARK_API_KEY", "DOUBAO_API_KEY"),
            aliases=("ark", "volcengine"),
            stream_usage=True,
        ),
        Source(
            "siliconflow",
            "https://api.siliconflow.cn/v1",
            "Qwen/Qwen2.5-7B-Instruct",
            ("SILICONFLOW_API_KEY",),
        ),
        Source(
            "ollama",
            "http://localhost:11434",
            "llama3.2",
            ("OLLAMA_API_KEY",),
            key_required=False,
            dialect="ollama",
            base_url_env=("OLLAMA_HOST",),
            formats=("ollama_generate",),
        ),
        Source(
            "ollama-openai",
            "http://localhost:11434/v1",
            "llama3.2",
            ("OLLAMA_API_KEY",),
            key_required=False,
            aliases=("ollama_openai",),
        ),
        Source(
            "anthropic",
            "https://api.anthropic.com",
            "claude-sonnet-4-5",
            ("ANTHROPIC_API_KEY",),
            aliases=("claude",),
            dialect="anthropic",
            base_url_env=("ANTHROPIC_BASE_URL",),
        ),
        Source(
            "gemini",
            "https://generativelanguage.googleapis.com",
            "gemini-2.5-flash",
            # google-genai reads GOOGLE_API_KEY first when both are set
            ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
            aliases=("google",),
            dialect="gemini",
            base_url_env=("GOOGLE_GEMINI_BASE_URL",),
        ),
        Source(
            "openai-compatible",
            None,
            None,
            ("OPENAI_COMPATIBLE_API_KEY",),
            key_required=False,
            aliases=("openai_compatible", "compatible", "vllm", "local"),
        ),
    )
}

_BY_NAME: dict[str, Source] = {alias: s for s in SOURCES.values() for alias in (s.name, *s.aliases)}


def get_source(name: str) -> Source:
    """The :class:`Source` called ``name`` (case-insensitive, aliases accepted)."""
    if not isinstance(name, str):
        raise ModuleConfigError(f"source: expected a source name (str), got {type(name).__name__}")
    source = _BY_NAME.get(name.strip().lower())
    if source is None:
        known = ", ".join(sorted(SOURCES))
        raise ModuleConfigError(
            f"unknown source {name!r}: use one of {known}, "
            "or source='openai-compatible' with base_url=... for any other OpenAI-compatible server"
        )
    return source


def is_source(name: str) -> bool:
    """Whether ``name`` is a source (case-insensitive, aliases accepted), as :func:`get_source` reads it."""
    return name.strip().lower() in _BY_NAME


def choose_format(source: Source, format: object) -> str:
    """The prompter format ``source`` sends: ``format`` if the source can send it, else its own dialect."""
    if format is None:
        return source.dialect
    allowed = (source.dialect, *source.formats)
    if not isinstance(format, str) or format not in allowed:
        shown = repr(format)[:60]
        hint = " (for an OpenAI-compatible body, use source='ollama-openai')" if source.name == "ollama" else ""
        raise ModuleConfigError(
            f"format={shown}: source {source.name!r} sends {' or '.join(map(repr, allowed))}{hint}; "
            "other formats are other sources (source='anthropic', 'gemini', 'ollama'...)"
        )
    return format


def resolve_api_key(source: Source, api_key: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The key to use: ``api_key`` if given, else the source's environment variables.

    Raises :class:`ModuleConfigError` naming the variables when a key is
    required and none is found. The message never contains a key.
    """
    if api_key:
        return check_secret(api_key, "api_key")
    environ = os.environ if env is None else env
    for var in source.key_env:
        value = environ.get(var)
        if value:
            return check_secret(value, var)
    if source.key_required:
        where = " or ".join(source.key_env)
        raise ModuleConfigError(f"no API key for source {source.name!r}: pass api_key=... or set {where}")
    return None


def check_secret(value: Any, where: str, spaces: bool = False) -> str:
    """*value* if it can go in an HTTP header as it is: visible ASCII (and spaces, with *spaces*: a header
    such as ``Bearer <token>``), no line break, control character or non-ASCII character.

    A key read from a file often keeps its line break. Sent as it is, the HTTP library refused the
    header with the whole value in its message (and that message was logged on every retry), so a
    key that is not plain text is refused here, before any request, and named without its value.
    """
    if not isinstance(value, str):
        raise ModuleConfigError(f"{where}: expected the key as a str, got {type(value).__name__}")
    for i, char in enumerate(value):
        if "!" <= char <= "~" or (spaces and char == " "):
            continue
        if char in _NAMED:
            what = _NAMED[char]
        elif ord(char) < 32 or ord(char) == 127:
            what = f"a control character (U+{ord(char):04X})"
        else:
            what = f"a character that is not ASCII (U+{ord(char):04X})"
        place = "at its end" if i == len(value) - 1 else "at its start" if i == 0 else f"at position {i}"
        raise ModuleConfigError(
            f"{where}: the key holds {what} {place}; an API key is visible ASCII only "
            "(strip the line break of a key read from a file: open(...).read().strip())"
        )
    return value


def shown_url(value: str) -> str:
    """*value* (a URL a caller gave) as an error message may show it: without its query string or fragment,
    and with anything up to an ``@`` (user info, however malformed the URL around it) shown as ``***``."""
    text = value.split("?", 1)[0].split("#", 1)[0]
    if "@" in text:
        text = "***@" + text.rsplit("@", 1)[1]
    return text[:200]


_NAMED = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab", " ": "a space"}


def resolve_base_url(source: Source, base_url: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The API root to use: ``base_url`` if given, else the source's base-URL variable, else its default.

    ``OLLAMA_HOST`` may be ``host``, ``host:port`` or a URL, as the Ollama client reads it
    (scheme ``http`` and port 11434 when left out).
    """
    if base_url:
        return base_url
    environ = os.environ if env is None else env
    for var in source.base_url_env:
        value = environ.get(var, "").strip()
        if value:
            return _ollama_host(value) if var == "OLLAMA_HOST" else value
    return source.base_url


def _ollama_host(value: str) -> str:
    """``OLLAMA_HOST`` as the Ollama client reads it: no scheme means ``http`` and port 11434;
    ``http://`` and ``https://`` without a port mean 80 and 443; an empty host is 127.0.0.1."""
    scheme, sep, rest = value.partition("://")
    if sep:
        default_port = {"http": 80, "https": 443}.get(scheme.lower(), 11434)
    else:
        scheme, rest, default_port = "http", value, 11434
    try:
        parts = urlsplit(f"{scheme}://{rest}")
        port = parts.port or default_port
    except ValueError:
        raise ModuleConfigError(f"OLLAMA_HOST={shown_url(value)!r} is not host[:port] or a URL") from None
    host = parts.hostname or "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"  # IPv6
    path = parts.path.strip("/")
    return f"{scheme}://{host}:{port}" + (f"/{path}" if path else "")
