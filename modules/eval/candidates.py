"""A PPL candidate's text cut into the context and the continuation that is scored (see
:class:`~modules.eval.inferencers.PPLInferencer`), and a label as the predictions file holds it."""

from __future__ import annotations

import os
import secrets
from collections.abc import Hashable, Mapping
from typing import Any

from modules.errors import ModuleConfigError
from prompter.templates import PromptTemplate

__all__ = ["as_written", "at_sep", "marking_sep", "split_candidates"]


def marking_sep(template: PromptTemplate) -> PromptTemplate:
    """A copy of *template* whose own ``sep_token`` is a fresh marker, so that a candidate is split where the
    template splits it, never where a value (data) spells the token; the marker is removed as the token is."""
    sep, marker = template.sep_token or "", f"\ue000{secrets.token_hex(8)}\ue001"

    def swap(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(sep, marker)
        if isinstance(value, Mapping):
            return {key: swap(item) for key, item in value.items()}
        return [swap(item) for item in value] if isinstance(value, (list, tuple)) else value

    return PromptTemplate(swap(template.template), template.ice_token, marker, missing=template.missing)


def as_written(label: Hashable) -> Hashable:
    """A label as the predictions file holds it: a JSON scalar as it is (an int label predicts an int, as in
    OpenCompass's predictions, so it compares equal to its gold), anything else as its ``str()``."""
    return label if label is None or type(label) in (str, int, float, bool) else str(label)


def at_sep(text: str, sep: str, *, strict: bool = False) -> tuple[str, str]:
    """OpenCompass's split: the context up to the first ``sep``, the answer after it with every ``sep`` removed."""
    at = text.find(sep) if sep else -1
    if at < 0:
        if strict:
            raise ModuleConfigError(
                f"normalizing_str: a PPL candidate has no sep_token {sep!r} to split at ({text[:80]!r}...); "
                "put the sep_token in every label's template where the answer begins"
            )
        return "", text
    return text[:at], text[at:].replace(sep, "")


def split_candidates(texts: list[str], sep: str | None) -> list[tuple[str, str]]:
    """Context and continuation: at ``sep``, else after the candidates' common beginning, never inside a word."""
    if sep is not None:
        return [at_sep(text, sep) for text in texts]
    prefix = os.path.commonprefix(texts) if len(texts) > 1 else ""
    cut = len(prefix)
    if any(len(t) == cut for t in texts):
        cut = 0  # one candidate is the beginning of another: score the whole texts
    elif cut and not prefix[-1].isspace() and any(not t[cut].isspace() for t in texts):
        cut = len(prefix) - len(prefix.split()[-1])  # back to where the word the candidates differ in begins
    return [(t[:cut], t[cut:]) for t in texts]
