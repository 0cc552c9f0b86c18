"""Continuation log-likelihood over HTTP: PPL evaluation through an online source's logprobs.

:meth:`OnlineChatModule.score` keeps the contract of
:meth:`TrainableModule.score <modules.local.trainable.TrainableModule.score>`: for each
``(context, continuation)`` pair, the mean negative log-likelihood (nats per token) of
the continuation's tokens. It asks the OpenAI-compatible text completions endpoint
(``POST {base_url}/completions``) to score the texts without generating, as the legacy
OpenAI Completions API, vLLM's server and ``prompter serve`` do::

    {"model": ..., "prompt": ["context + continuation", ...], "max_tokens": 0, "echo": true,
     "logprobs": 1, "temperature": 0}

Each choice (one per prompt, by ``index``) echoes its prompt with ``logprobs``:
``tokens``, ``token_logprobs`` (the first is ``null``: nothing precedes it) and
``text_offset`` (each token's first character in the text). The continuation's tokens
are those that end after the context does, the token that holds its first character
included: the server tokenizes the whole text, so where context and continuation
share a token, that token counts for the continuation (the local path tokenizes the
two apart; where they meet on a token boundary both read the same tokens).

A native source (Anthropic, Gemini, Ollama) or a server without the endpoint or its
logprobs raises :class:`ScoringUnsupportedError` naming the remedy.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from modules.errors import APIResponseValidationError, APIStatusError, ModuleConfigError

__all__ = [
    "ScoringUnsupportedError",
    "checked_pairs",
    "continuation_losses",
    "losses_of",
    "refused",
    "score_body",
    "unsupported",
]

_REMEDY = (
    "PPL needs token logprobs of a given text: use an OpenAI-compatible server whose /v1/completions "
    "answers echo=true with logprobs (vLLM, prompter serve), or a local TrainableModule"
)


class ScoringUnsupportedError(ModuleConfigError):
    """The source cannot score a text (no logprobs); the message names what to use instead."""


def score_body(model: str, texts: Sequence[str]) -> dict[str, Any]:
    """The ``/completions`` body that asks for every text's token logprobs and no new token."""
    return {"model": model, "prompt": list(texts), "max_tokens": 0, "echo": True, "logprobs": 1, "temperature": 0}


def continuation_losses(data: object, pairs: Sequence[tuple[str, str]]) -> list[float]:
    """Each pair's mean continuation loss from a ``/completions`` answer to :func:`score_body`."""
    choices = data.get("choices") if isinstance(data, Mapping) else None
    if not isinstance(choices, list) or len(choices) != len(pairs):
        got = len(choices) if isinstance(choices, list) else "no"
        raise APIResponseValidationError(f"choices: expected {len(pairs)} (one per text), got {got}")
    by_index: dict[int, Any] = {}
    for i, choice in enumerate(choices):
        index = choice.get("index", i) if isinstance(choice, Mapping) else None
        if not isinstance(index, int) or not 0 <= index < len(pairs) or index in by_index:
            raise APIResponseValidationError(f"choices[{i}].index: expected a distinct 0..{len(pairs) - 1}")
        by_index[index] = choice
    return [_loss(by_index[i], i, context, continuation) for i, (context, continuation) in enumerate(pairs)]


def _loss(choice: Mapping[str, Any], i: int, context: str, continuation: str) -> float:
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, Mapping):
        raise ScoringUnsupportedError(f"choices[{i}]: the server sent no logprobs; {_REMEDY}")
    values, offsets = logprobs.get("token_logprobs"), logprobs.get("text_offset")
    if (
        not isinstance(values, list)
        or not isinstance(offsets, list)
        or len(values) != len(offsets)
        or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
    ):
        raise APIResponseValidationError(
            f"choices[{i}].logprobs: expected token_logprobs and text_offset lists of one length"
        )
    end = len(context) + len(continuation)
    start = len(context)
    scored: list[float] = []
    for t, offset in enumerate(offsets):
        if offset >= end:
            break  # past the echoed text: a token the server generated
        token_end = offsets[t + 1] if t + 1 < len(offsets) and offsets[t + 1] <= end else end
        if token_end <= start:
            continue  # a token of the context
        value = values[t]
        if value is None:
            continue  # the text's first token: nothing precedes it, so nothing scores it
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(_float(value)):
            raise APIResponseValidationError(f"choices[{i}].logprobs.token_logprobs[{t}]: expected a finite number")
        scored.append(float(value))
    if not scored:
        raise ScoringUnsupportedError(
            f"pair {i}: no token of the continuation was scored (an empty context leaves the first token "
            "unscored over HTTP); give the pair a context"
        )
    return -sum(scored) / len(scored)


def checked_pairs(pairs: Sequence[tuple[str, str]], batch_size: int) -> list[tuple[str, str]]:
    """``pairs`` as a list, each a (context, non-empty continuation) of strings; else a ModuleConfigError."""
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ModuleConfigError(f"batch_size: expected an int >= 1, got {batch_size!r}")
    out: list[tuple[str, str]] = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ModuleConfigError(f"pairs[{i}]: expected a (context, continuation) pair")
        context, continuation = pair
        if not isinstance(context, str) or not isinstance(continuation, str):
            raise ModuleConfigError(f"pairs[{i}]: expected (context, continuation) strings")
        if not continuation:
            raise ModuleConfigError(f"pairs[{i}]: the continuation is empty; there is nothing to score")
        out.append((context, continuation))
    return out


def unsupported(source: str) -> ScoringUnsupportedError:
    """The error for a native source, which has no logprobs of a given text."""
    return ScoringUnsupportedError(f"source {source!r} has no token logprobs of a given text; {_REMEDY}")


def refused(error: APIStatusError) -> ScoringUnsupportedError | None:
    """The error for a server that refused ``/completions`` scoring (no such route, no echo), else None."""
    if error.status_code in (400, 404, 405, 422, 501):
        return ScoringUnsupportedError(f"{error} (POST /completions); {_REMEDY}")
    return None


def losses_of(raw: bytes, pairs: Sequence[tuple[str, str]]) -> list[float]:
    """:func:`continuation_losses` of a raw ``/completions`` answer."""
    try:
        data = json.loads(raw)
    except ValueError:
        raise APIResponseValidationError("the /completions answer is not JSON") from None
    return continuation_losses(data, pairs)


def _float(value: float) -> float:
    """``value`` as a float; a JSON integer too large for one (``1`` and 400 zeros) is infinite, not an error."""
    try:
        return float(value)
    except OverflowError:
        return math.inf
