"""What :meth:`ModelFormat.from_chat_template` accepts, checked before any of it is hashed or run.

A template source is a ``str``; a tokenizer whose model ships named templates gives a
mapping of names to sources (``{"default": ..., "tool_use": ...}``), which its
``tokenizer_config.json`` stores as a list (``[{"name": "default", "template": ...}, ...]``,
read as transformers reads it). The tokens and the
name are ``str`` or None. A ``str`` subclass is read as its exact text (its own
``__hash__``, ``__eq__`` or ``__str__`` never runs: they would run in the compile cache
and in every comparison a template makes); anything else is a typed error naming the
argument.

>>> template_text("{{ messages }}")
'{{ messages }}'
>>> named_templates({"default": "a", "tool_use": "b"})
{'default': 'a', 'tool_use': 'b'}
>>> listed_templates([{"name": "default", "template": "a"}, {"name": "tool_use", "template": "b"}])
{'default': 'a', 'tool_use': 'b'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prompter.errors import PromptTypeError, TemplateError

__all__ = ["listed_templates", "named_templates", "optional_text", "template_text"]


def template_text(source: Any, where: str = "chat template") -> str:
    """*source* as a plain ``str``, or :class:`TemplateError` naming its type."""
    if not isinstance(source, str):
        raise TemplateError(f"{where}: expected jinja source as str, got {type(source).__name__}")
    return source if type(source) is str else str.__str__(source)


def named_templates(source: Mapping[Any, Any]) -> dict[str, str]:
    """A tokenizer's named templates as plain ``{name: source}`` strings; a ``default`` one is required."""
    templates: dict[str, str] = {}
    for name, text in source.items():
        if not isinstance(name, str):
            raise TemplateError(f"chat template: template names must be str, got {type(name).__name__}")
        name = template_text(name, "chat template name")
        templates[name] = template_text(text, f"chat template {name!r}")
    if "default" not in templates:
        raise TemplateError(f"chat template: named templates need a 'default' one, got {sorted(templates)}")
    return templates


def listed_templates(source: Sequence[Any]) -> dict[str, str]:
    """The named templates of a ``tokenizer_config.json`` (a list of ``{"name": ..., "template": ...}``)
    as a mapping of names to sources, as transformers reads them; a name given twice is an error."""
    found: dict[str, Any] = {}
    for i, entry in enumerate(source):
        if not isinstance(entry, Mapping) or "name" not in entry or "template" not in entry:
            what = "a dict without 'name' and 'template'" if isinstance(entry, Mapping) else type(entry).__name__
            raise TemplateError(
                f"chat template: expected jinja source as str, got {type(source).__name__}; a list is read as the "
                "named templates of a tokenizer_config.json ([{'name': ..., 'template': ...}, ...]), "
                f"and item {i} is {what}"
            )
        name = template_text(entry["name"], f"chat template[{i}] name")
        if name in found:
            raise TemplateError(f"chat template[{i}]: the name {name!r} is given twice")
        found[name] = entry["template"]
    return named_templates(found)


def optional_text(value: Any, where: str) -> str | None:
    """*value* (a token or a name) as a plain ``str``, None as None, else :class:`PromptTypeError`."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise PromptTypeError(f"{where}: expected str or None, got {type(value).__name__}")
    return value if type(value) is str else str.__str__(value)
