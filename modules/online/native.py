"""The native protocols by the name the sources table gives them (kept apart from ``dialects``,
which each protocol imports for its types, so that imports point one way)."""

from __future__ import annotations

from modules.errors import ModuleConfigError
from modules.online.dialects import Dialect

__all__ = ["dialect_for"]


def dialect_for(name: str) -> Dialect | None:
    """The dialect called ``name``; None for ``"openai"`` (the module's own code)."""
    if name == "openai":
        return None
    if name == "anthropic":
        from modules.online.anthropic import ANTHROPIC

        return ANTHROPIC
    if name == "gemini":
        from modules.online.gemini import GEMINI

        return GEMINI
    if name == "ollama":
        from modules.online.ollama import OLLAMA

        return OLLAMA
    if name == "ollama_generate":
        from modules.online.ollama_generate import OLLAMA_GENERATE

        return OLLAMA_GENERATE
    raise ModuleConfigError(f"unknown wire dialect {name!r}")  # pragma: no cover - a bug in SOURCES
