"""A PPL candidate's text cut into the context and the continuation that is scored (see
:class:`~modules.eval.inferencers.PPLInferencer`)."""

from __future__ import annotations

import os

from modules.errors import ModuleConfigError

__all__ = ["at_sep", "split_candidates"]


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
