"""Configs as written: OpenCompass/AISBench ``dict(type=..., ...)`` blocks built into objects.

``type`` may be one of our classes, or a name: ``"PromptTemplate"`` or a dotted path
such as ``"opencompass.openicl.icl_prompt_template.PromptTemplate"``, of which only the
last part is read. Names are looked up in a fixed table, never imported, so a config
cannot run code by naming it. Nested ``dict(type=...)`` values (a retriever's
templates) are built first; the caller's dicts are never changed.

>>> t = build(dict(type="opencompass.openicl.PromptTemplate", template="Q: {q}\\nA: {a}"))
>>> t.generate_item({"q": "1+1=?", "a": "2"}, output_field="a")
'Q: 1+1=?\\nA: '

A model's ``meta_template`` has no ``type``: :func:`build_meta` reads the dict form
(``round``, ``reserved_roles``, ``begin``, ``end``) and the list form of API models
(``[dict(role="system", content=...)]``, OpenCompass's messages prefix).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from prompter.errors import EvalTemplateError
from prompter.templates.compat import Compat, check_compat
from prompter.templates.meta_template import MetaTemplate
from prompter.templates.multi_turn import MultiTurnPromptTemplate
from prompter.templates.multimodal import MMPromptTemplate
from prompter.templates.prompt_template import PromptTemplate
from prompter.templates.retrievers import BM25Retriever, FixKRetriever, RandomRetriever, ZeroRetriever

__all__ = ["TEMPLATE_TYPES", "build", "build_meta", "type_name"]

Factory = Callable[..., Any]

TEMPLATE_TYPES: dict[str, Factory] = {
    "PromptTemplate": PromptTemplate,
    "MultiTurnPromptTemplate": MultiTurnPromptTemplate,
    "MMPromptTemplate": MMPromptTemplate,
    "ZeroRetriever": ZeroRetriever,
    "FixKRetriever": FixKRetriever,
    "RandomRetriever": RandomRetriever,
    "BM25Retriever": BM25Retriever,
}
"""The names a ``type`` may give in this package (modules.eval adds the inferencers)."""

_COMPAT_TYPES = (PromptTemplate, MultiTurnPromptTemplate, MMPromptTemplate)


def type_name(value: object, where: str = "type") -> str:
    """The short name a ``type`` value stands for: a class's name, or the last part of a dotted name."""
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, str) and value.strip():
        return value.strip().rpartition(".")[2]
    raise EvalTemplateError(f"{where}: expected a class or a class name, got {value!r}")


def build(
    cfg: Mapping[str, Any] | Any,
    registry: Mapping[str, Factory] | None = None,
    *,
    where: str = "config",
    compat: Compat | None = None,
    **extra: Any,
) -> Any:
    """The object a ``dict(type=..., **kwargs)`` config describes; a built object passes through.

    ``extra`` adds keyword arguments the config cannot hold (a retriever's index set).
    ``compat`` is given to every template that does not set its own.
    """
    if not isinstance(cfg, Mapping):
        return cfg
    table = dict(TEMPLATE_TYPES)
    table.update(registry or {})
    if "type" not in cfg:
        raise EvalTemplateError(f"{where}: a config block needs type=... (one of {sorted(table)})")
    name = type_name(cfg["type"], f"{where}['type']")
    factory = table.get(name)
    if factory is None:
        raise EvalTemplateError(f"{where}['type']: unknown type {name!r}; known types: {sorted(table)}")
    if isinstance(cfg["type"], type) and cfg["type"] is not factory:
        raise EvalTemplateError(f"{where}['type']: {cfg['type']!r} is not prompter's {name}; use the name {name!r}")
    check_compat(compat)
    kwargs: dict[str, Any] = {}
    for key, value in cfg.items():
        if key == "type":
            continue
        if not isinstance(key, str):
            raise EvalTemplateError(f"{where}: keys must be strings, got {key!r}")
        if isinstance(value, Mapping) and "type" in value and key != "template":
            value = build(value, registry, where=f"{where}[{key!r}]", compat=compat)
        kwargs[key] = value
    if factory in _COMPAT_TYPES and compat is not None:
        kwargs.setdefault("compat", compat)
    kwargs.update(extra)
    try:
        return factory(**kwargs)
    except TypeError as exc:
        raise EvalTemplateError(f"{where}: {name} does not take these arguments ({exc})") from None


def build_meta(cfg: object, *, compat: Compat | None = None) -> MetaTemplate:
    """A :class:`MetaTemplate` from a model config's ``meta_template`` (None: no meta template).

    The list form (OpenAI-style messages, ``role`` in system/user/assistant) becomes
    the API roles of a meta template whose ``prefix`` they are: see
    :meth:`MetaTemplate.parse_api`.
    """
    if cfg is None:
        return MetaTemplate(compat=compat)
    if isinstance(cfg, MetaTemplate):
        return cfg
    if isinstance(cfg, Mapping):
        known = ("round", "reserved_roles", "begin", "end", "eos_token_id")
        unknown = sorted(map(str, set(cfg) - set(known)))
        if unknown:
            hints = [f"{c[0]!r} for {key!r}" for key in unknown if (c := difflib.get_close_matches(key, known, 1))]
            hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
            raise EvalTemplateError(f"meta_template: unknown key(s) {unknown}{hint}; a meta template has {list(known)}")
        return MetaTemplate(**cfg, compat=compat)
    if isinstance(cfg, Sequence) and not isinstance(cfg, str):
        return MetaTemplate.from_messages(cfg, compat=compat)
    raise EvalTemplateError(f"meta_template: expected a dict, a list of messages or None, got {type(cfg).__name__}")
