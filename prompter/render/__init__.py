"""One pure renderer per dialect: a function from a Conversation to that dialect's body.

Adding a dialect is adding one module and one line in ``_DIALECTS``. Before a renderer runs,
media parts are resolved (:mod:`prompter.render.media`) and the conversation is arranged for
the dialect under the multi-agent strategy (:mod:`prompter.render.strategies`).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

from prompter.conversation import Conversation
from prompter.errors import PromptValueError
from prompter.messages import ContentPart

__all__ = ["DIALECTS", "render_dialect"]

# dialect name -> (module, function); imported on first use
_DIALECTS: dict[str, tuple[str, str]] = {
    "openai": ("prompter.render.openai", "render_openai"),
    "anthropic": ("prompter.render.anthropic", "render_anthropic"),
    "gemini": ("prompter.render.gemini", "render_gemini"),
    "ollama": ("prompter.render.ollama", "render_ollama"),
    "ollama_generate": ("prompter.render.ollama_generate", "render_ollama_generate"),
    "dashscope": ("prompter.render.dashscope", "render_dashscope"),
    "zhipu": ("prompter.render.zhipu", "render_zhipu"),
}
DIALECTS = frozenset(_DIALECTS)
# dialect -> (module, function) giving its body AgentScope 0.1.x's content-part lists (strategies.text_as_parts)
_PART_LISTS: dict[str, tuple[str, str]] = {
    "anthropic": ("prompter.render.anthropic", "text_blocks"),
    "dashscope": ("prompter.render.dashscope", "text_items"),
    "openai": ("prompter.render.openai", "text_parts"),
}
# each dialect module's check_part(part, where) refuses a media part the API takes nowhere (audio for
# Anthropic, an image URL for Ollama): the strategies run it before they merge the messages into one, so
# the error names the caller's place (history[1].content[0]), not the merged message's
_loaded: dict[str, tuple[Callable[[Conversation], Any], Callable[[ContentPart, str], None] | None]] = {}


def render_dialect(
    name: str,
    conv: Conversation,
    strategy: str | None = None,
    history_header: str | None = None,
    as_agent: str | None = None,
) -> Any:
    """Render ``conv`` as the body of API dialect ``name`` (``strategy``, ``history_header`` and
    ``as_agent`` as in :func:`prompter.render.strategies.arrange`)."""
    from prompter.render.common import check_json_values
    from prompter.render.media import resolve_conversation
    from prompter.render.strategies import arrange, checked_options, text_as_parts

    loaded = _loaded.get(name)
    if loaded is None:
        if name not in _DIALECTS:
            known = ", ".join(["text", *sorted(_DIALECTS)])
            raise PromptValueError(f"unknown format {name!r}; expected one of: {known}")
        module_name, function = _DIALECTS[name]
        module = import_module(module_name)
        loaded = _loaded[name] = (getattr(module, function), getattr(module, "check_part", None))
    render, check_part = loaded
    checked_options(strategy, history_header, as_agent)
    check_json_values(conv)
    conv = resolve_conversation(conv, file_urls=name == "dashscope")
    body = render(arrange(conv, name, strategy, history_header, as_agent, check_part))
    if name in _PART_LISTS and text_as_parts(strategy, history_header):
        module_name, function = _PART_LISTS[name]
        body = getattr(import_module(module_name), function)(body)
    return body
