"""One developer-written string of a harness template, compiled once and filled in one pass.

The string is split at the in-context-example token (``ice_token``) first, then each
piece is parsed into ``{field}`` slots by :class:`~prompter.instruction.InstructionTemplate`.
Filling joins the filled pieces with the in-context examples, so neither an entry's
values nor the examples' text is ever scanned again: an example holding ``{question}``
keeps it, and a value holding ``</E>`` is not mistaken for the ice token.

>>> t = SlotText("Solve.\\n</E>{question}\\n", where="template", ice_token="</E>")
>>> t.fill({"question": "{answer}"}, ice="1+1=?\\n2\\n")
'Solve.\\n1+1=?\\n2\\n{answer}\\n'
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping, MutableMapping
from typing import Any, Literal, cast

from prompter.errors import EvalTemplateError, MissingSlotError
from prompter.instruction import InstructionTemplate
from prompter.templates.prompt_list import as_text, fill_keep

__all__ = ["Missing", "SlotText", "check_config_type", "check_missing", "check_token", "overlay", "snapshot"]

Missing = Literal["error", "keep"]
"""What to do with a ``{field}`` the entry lacks: raise MissingSlotError, or keep it as written."""


def check_token(name: str, token: str | None) -> str | None:
    """Validate an ``ice_token`` / ``sep_token`` argument."""
    if token is None or (isinstance(token, str) and token):
        return token
    raise EvalTemplateError(f"{name}: expected a non-empty string or None, got {token!r}")


def check_config_type(value: object, expected: str) -> None:
    """Accept the ``type=`` key of a config pasted as keyword arguments, if it names this class.

    ``value`` is None, the class itself, or its name (a dotted path is read by its last part).
    """
    if value is None:
        return
    name = value.__name__ if isinstance(value, type) else value.rpartition(".")[2] if isinstance(value, str) else None
    if name != expected:
        raise EvalTemplateError(
            f"type: this is a {expected}, but the config says type={value!r}; build it with "
            "prompter.templates.config.build(cfg) to get the type the config names"
        )


def check_missing(missing: str) -> Missing:
    """Validate a ``missing=`` argument."""
    if missing == "error":
        return "error"
    if missing == "keep":
        return "keep"
    raise EvalTemplateError(f"missing: expected 'error' or 'keep', got {missing!r}")


def overlay(base: Mapping[str, Any], key: str, value: Any) -> Mapping[str, Any]:
    """``base`` seen with ``key`` set to ``value``; ``base`` itself is neither copied nor changed."""
    return ChainMap({key: value}, cast("MutableMapping[str, Any]", base))


def snapshot(value: Any) -> Any:
    """A private copy of a caller's template: dicts and lists copied, strings shared."""
    if isinstance(value, Mapping):
        return {k: snapshot(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [snapshot(v) for v in value]
    return value


class SlotText:
    """A template string split at the ice token into slot templates; see the module docstring."""

    __slots__ = ("_parts", "_parts_sep", "slots", "source", "where")

    source: str
    """The string as the developer wrote it."""
    where: str
    """Where it sits in its template (``"template['round'][1]['prompt']"``), for error messages."""
    slots: tuple[str, ...]
    """The field names it uses, in order of first appearance."""

    def __init__(self, source: str, where: str, ice_token: str | None = None, sep_token: str | None = None):
        if not isinstance(source, str):
            raise EvalTemplateError(f"{where}: expected a string, got {type(source).__name__}")
        self.source = source
        self.where = where
        pieces = source.split(ice_token) if ice_token else [source]
        # with the separator kept (PPL with remain_sep) and without it (everything else)
        self._parts_sep = tuple(InstructionTemplate(p) for p in pieces)
        if sep_token:
            self._parts = tuple(InstructionTemplate(p.replace(sep_token, "")) for p in pieces)
        else:
            self._parts = self._parts_sep
        self.slots = tuple(dict.fromkeys(s for p in self._parts_sep + self._parts for s in p.slots))

    @property
    def has_ice(self) -> bool:
        """Whether the ice token occurs in the string."""
        return len(self._parts) > 1

    def pieces(self, values: Mapping[str, Any], *, keep_sep: bool = False, missing: Missing = "error") -> list[str]:
        """The filled text between occurrences of the ice token (one more than the tokens)."""
        parts = self._parts_sep if keep_sep else self._parts
        if missing == "keep":
            return [fill_keep(p, values) for p in parts]
        out = []
        for part in parts:
            for name in part.slots:
                if name not in values:
                    raise MissingSlotError(
                        f"{self.where}: the entry has no field {name!r} (it has {sorted(map(str, values))}); "
                        "add it to the entry, or build the template with missing='keep'"
                    )
            out.append(part.fill({name: as_text(values[name], name) for name in part.slots}))
        return out

    def fill(
        self, values: Mapping[str, Any], ice: str = "", *, keep_sep: bool = False, missing: Missing = "error"
    ) -> str:
        """The filled string with ``ice`` where the ice token was."""
        return ice.join(self.pieces(values, keep_sep=keep_sep, missing=missing))

    def __repr__(self) -> str:
        return f"SlotText({self.source!r})"
