"""One pure renderer per dialect: a function from a Conversation to that dialect's body.

Adding a dialect is adding one module and one line in ``_DIALECTS``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

from prompter.conversation import Conversation
from prompter.errors import PromptValueError

__all__ = ["DIALECTS", "render_dialect"]

# dialect name -> (module, function); imported on first use
_DIALECTS: dict[str, tuple[str, str]] = {
    "openai": ("prompter.render.openai", "render_openai"),
    "anthropic": ("prompter.render.anthropic", "render_anthropic"),
    "gemini": ("prompter.render.gemini", "render_gemini"),
    "ollama": ("prompter.render.ollama", "render_ollama"),
    "dashscope": ("prompter.render.dashscope", "render_dashscope"),
    "zhipu": ("prompter.render.zhipu", "render_zhipu"),
}
DIALECTS = frozenset(_DIALECTS)
_loaded: dict[str, Callable[[Conversation], Any]] = {}


def render_dialect(name: str, conv: Conversation) -> Any:
    """Render ``conv`` as the body of API dialect ``name``."""
    render = _loaded.get(name)
    if render is None:
        if name not in _DIALECTS:
            known = ", ".join(["text", *sorted(_DIALECTS)])
            raise PromptValueError(f"unknown format {name!r}; expected one of: {known}")
        module, function = _DIALECTS[name]
        render = _loaded[name] = getattr(import_module(module), function)
    return render(conv)
