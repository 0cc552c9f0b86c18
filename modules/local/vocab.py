"""What generation needs to know about a loaded tokenizer, computed once per model.

:class:`Vocab` holds the context length, the stop words that are single tokens
(generation stops at their ids), the ones that are not (matched as text) and
the model's tool-call syntax.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from modules.local.tool_calls import tool_syntax_of

__all__ = ["Vocab", "context_of"]


@dataclass(frozen=True)
class Vocab:
    """What generation needs to know about the tokenizer, computed once per loaded model."""

    context: int
    stop_token_ids: tuple[int, ...]
    text_stops: tuple[str, ...]
    tool_syntax: tuple[str, str | None] | None

    @classmethod
    def of(cls, path: str, tokenizer: Any, fmt: Any) -> Vocab:
        """Read from the model folder *path*, its *tokenizer* and its prompter format *fmt* (or None)."""
        vocab = tokenizer.get_vocab()
        words = [w for w in (getattr(fmt, "stop_words", None) or ()) if isinstance(w, str) and w]
        eos = getattr(fmt, "eos_token", None) or tokenizer.eos_token
        if eos and eos not in words:
            words.append(eos)
        ids = tuple(dict.fromkeys(vocab[w] for w in words if w in vocab))
        text_stops = tuple(w for w in words if w not in vocab)
        return cls(context_of(path, tokenizer), ids, text_stops, tool_syntax_of(fmt, tokenizer, vocab))


def context_of(path: str, tokenizer: Any) -> int:
    """The model's ``max_position_embeddings``, else the tokenizer's ``model_max_length``."""
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(path, local_files_only=True)
        positions = getattr(config, "max_position_embeddings", None)
    except (OSError, ValueError):  # a tokenizer-only folder
        positions = None
    return int(positions or min(tokenizer.model_max_length, 1 << 30))
