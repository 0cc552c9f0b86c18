"""``POST /v1/completions`` with ``echo: true, logprobs: N, max_tokens: 0``: the prompt's token logprobs.

The legacy OpenAI Completions API (and vLLM's server) answer such a request with no
new token and, per prompt, the prompt's own tokens with ``token_logprobs`` (``null``
for the first), ``text_offset`` and ``top_logprobs``. This is how an evaluation
scores a text over HTTP (:mod:`modules.online.scoring`), so PPL against this server
picks what in-process PPL picks where both read the same tokens.

Only that combination is served: ``echo`` or ``logprobs`` with generation stay a 400,
as does ``max_tokens: 0`` without them. Generation's options hold as scoring can honour
them: ``temperature`` 0 or 1 and ``top_p`` 1 (the model's own distribution; other values
a 400 by name), ``seed`` and ``stop`` as given (nothing is sampled or generated, though
``stop`` is checked as generation checks it), ``stream_options`` a 400 without ``stream``
as in generation (and scoring takes no stream).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from typing import Any

from modules.server.body_limit import CLOSING_POLL_S
from modules.server.errors import HTTPError, cancelled_error, from_exception
from modules.server.validation import check_stream_options, stop_strings

__all__ = ["MAX_SCORED_PROMPTS", "is_scoring", "score_response", "scoring_problem"]

MAX_SCORED_PROMPTS = 64
"""The most prompts one scoring request may hold."""


def is_scoring(body: Any) -> bool:
    """Whether ``body`` asks to score its prompt: ``echo: true``, ``logprobs`` 0..5, ``max_tokens: 0``."""
    extra = body.model_extra or {}
    top = extra.get("logprobs")
    return (
        extra.get("echo") is True
        and body.max_tokens == 0
        and isinstance(top, int)
        and not isinstance(top, bool)
        and 0 <= top <= 5
    )


def scoring_problem(body: Any) -> None:
    """For a request that asks to score (``echo: true``, ``max_tokens: 0``) with a ``logprobs`` that is not
    an int 0..5 (checked after :func:`is_scoring` said no): the 400 naming ``logprobs``."""
    extra = body.model_extra or {}
    top = extra.get("logprobs")
    if extra.get("echo") is True and top is not None:
        shown = json.dumps(top)[:100]
        raise HTTPError(400, f"logprobs: an int from 0 to 5 when scoring a prompt, got {shown}", param="logprobs")


async def score_response(state: Any, body: Any, http: Any) -> dict[str, Any]:
    """The ``text_completion`` answer to a scoring request (checked with :func:`is_scoring`); a client that
    hangs up (*http*, the request) stops the scoring at the next prompt."""
    extra = body.model_extra or {}
    for key in sorted(set(extra) - {"echo", "logprobs"}):
        if extra[key] is not None:
            raise HTTPError(400, f"the option {key[:100]!r} is not supported by this server when scoring", param=key)
    if body.stream:
        raise HTTPError(400, "stream: scoring a prompt (echo with max_tokens=0) answers at once", param="stream")
    if body.n not in (None, 1):
        raise HTTPError(400, f"n={body.n} is not supported by this server", param="n")
    check_stream_options(body)  # the 400s generation answers, for the same options
    stop_strings(body)  # checked as generation checks them; nothing is generated, so none can apply
    _refuse_reshaped_distribution(body)
    texts = [body.prompt] if isinstance(body.prompt, str) else list(body.prompt)
    if not 1 <= len(texts) <= MAX_SCORED_PROMPTS:
        raise HTTPError(400, f"prompt: 1 to {MAX_SCORED_PROMPTS} prompts to score, got {len(texts)}", param="prompt")
    score = getattr(state.module, "text_logprobs", None)
    if score is None:
        raise HTTPError(400, "echo with logprobs is not supported by this server's engine", param="echo")
    cancel = state.admit()
    try:
        loop = asyncio.get_running_loop()
        scoring = loop.run_in_executor(state.executor, _score_each, score, texts, extra["logprobs"], cancel)
        watcher = asyncio.ensure_future(_watch_hang_up(http, cancel))
        try:
            # stop() answers a request in flight 503 at once, as it does a generation: a text's pass
            # cannot be cut short, so the answer is not waited for once the server is stopping.
            while not (await asyncio.wait({scoring}, timeout=CLOSING_POLL_S))[0]:
                if cancel.is_set() and state.closing:
                    scoring.cancel()
                    raise cancelled_error(state)
        finally:
            watcher.cancel()
        scored = scoring.result()  # a client that hung up: its slot is given back once the scoring stopped
        if scored is None:
            raise cancelled_error(state)
    except RuntimeError as exc:
        if state.closing:  # the pool was shut down between admission and here
            raise cancelled_error(state) from None
        raise from_exception(exc, input_param="prompt") from None
    except BaseException as exc:
        raise from_exception(exc, input_param="prompt") from None
    finally:
        state.release(cancel)
    tokens = sum(len(s["tokens"]) for s in scored)
    return {
        "id": "cmpl-" + uuid.uuid4().hex,
        "object": "text_completion",
        "created": int(time.time()),
        "model": state.model_name,
        "choices": [
            {"index": i, "text": text, "finish_reason": "length", "logprobs": logprobs}
            for i, (text, logprobs) in enumerate(zip(texts, scored, strict=True))
        ],
        "usage": {"prompt_tokens": tokens, "completion_tokens": 0, "total_tokens": tokens},
    }


def _refuse_reshaped_distribution(body: Any) -> None:
    """400 for a ``temperature`` or ``top_p`` that would reshape the distribution the logprobs come from.

    A score is the model's own distribution (temperature 1, no nucleus): ``temperature`` 0 or 1 and
    ``top_p`` 1 say nothing else (0 asks for no sampling, and scoring samples none); any other value
    asks for logprobs of a scaled or cut distribution, which this server does not compute: refused by
    name, never answered with the plain ones. (``seed`` only makes sampling repeatable, and ``stop`` ends
    new text: with nothing generated both hold as given.)
    """
    for key, neutral in (("temperature", (0, 1)), ("top_p", (1,))):
        value = getattr(body, key)
        if value is not None and value not in neutral:
            allowed = " or ".join(str(v) for v in neutral)
            raise HTTPError(
                400,
                f"{key}={value} is not supported when scoring a prompt (echo with max_tokens=0): its logprobs are "
                f"the model's own distribution; send {key} {allowed} or leave it out",
                param=key,
            )


def _score_each(score: Any, texts: list[str], top: int, cancel: threading.Event) -> list[Any] | None:
    """Score *texts* one pass each, as ``score(texts)`` does, looking between them whether the request was
    cancelled (the client hung up, or the server is stopping): None then, instead of scoring the rest."""
    scored: list[Any] = []
    for text in texts:
        if cancel.is_set():
            return None
        scored += score([text], top=top)
    return scored


async def _watch_hang_up(http: Any, cancel: threading.Event) -> None:
    """Set *cancel* when the client of *http* disconnects (its body is in: the next ASGI message is that)."""
    while True:
        message = await http.receive()
        if message.get("type") == "http.disconnect":
            cancel.set()
            return
