"""Log-likelihood of continuations: what PPL evaluation asks of a local model.

For each ``(context, continuation)`` pair the model reads ``context`` then
``continuation`` and reports the mean negative log-likelihood of the
continuation's tokens (lower: the model finds it likelier). The two texts are
tokenized apart and joined, so the continuation is scored on exactly its own
tokens whatever the context ends with, and both go through the same safe
tokenization as generation: the whole text is data, and a continuation that
spells ``<|im_end|>`` is scored as those characters, never as the control token.

An empty context starts from the tokenizer's bos token (or eos, as after GPT-2's
``<|endoftext|>``), so the first token of the continuation is scored too.

Pairs are scored in batches, right-padded; one pair's scores do not depend on
which pairs share its batch beyond float rounding, and callers that need
bit-identical results (PPL over worker processes) score one sample's candidates
as one batch.

:func:`opencompass_ppl` scores as OpenCompass's Hugging Face models' ``get_ppl``
instead (what the evaluation's ``compat="opencompass"`` mode asks for): the joined
text, tokenized whole with the tokens the tokenizer adds (a bos, where it adds
one), and the summed loss of the tokens after the context divided by the number of
tokens less the context's (so, with no context, the first token counts in the
divisor though it has no loss).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from modules.errors import ContextLengthError, ModelNotStartedError, ModuleConfigError
from modules.local.safe_tokens import encode_with_spans

__all__ = ["continuation_nll", "encode_pair", "opencompass_ppl", "text_logprobs"]


Spans = Sequence[tuple[int, int]]
"""User-text spans of a pair's joined text ``context + continuation`` (None: all of it is user text)."""


def _as_data(tokenizer: Any, text: str, spans: Spans | None = None) -> list[int]:
    """*text*'s ids, where only text outside *spans* (None: no text) may give control ids."""
    return encode_with_spans(tokenizer, text, [(0, len(text))] if spans is None else spans) if text else []


def _plain(text: str) -> str:
    """The characters of a str (a subclass's own methods are the caller's code and are never run)."""
    return str.__str__(text)


def _clip(spans: Spans | None, start: int, end: int) -> Spans | None:
    """The parts of *spans* inside ``start .. end``, counted from *start*."""
    if spans is None:
        return None
    return [(max(s, start) - start, min(e, end) - start) for s, e in spans if s < end and e > start]


def encode_pair(
    tokenizer: Any, context: str, continuation: str, spans: Spans | None = None
) -> tuple[list[int], list[int]]:
    """The context's ids (a start token when empty) and the continuation's ids, tokenized apart."""
    if not isinstance(context, str) or not isinstance(continuation, str):
        raise ModuleConfigError(f"pairs: expected (context, continuation) strings, got {context!r}, {continuation!r}")
    context, continuation = _plain(context), _plain(continuation)
    ctx = _as_data(tokenizer, context, _clip(spans, 0, len(context)))
    if not ctx:
        first = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        if first is None:
            raise ModuleConfigError("context: empty, and the tokenizer has no bos or eos token to start from")
        ctx = [first]
    cont = _as_data(tokenizer, continuation, _clip(spans, len(context), len(context) + len(continuation)))
    if not cont:
        raise ModuleConfigError("continuation: empty; there is nothing to score")
    return ctx, cont


def continuation_nll(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[str, str]],
    *,
    max_context: int,
    batch_size: int = 8,
    user_spans: Sequence[Spans | None] | None = None,
) -> list[float]:
    """Mean negative log-likelihood (nats per token) of each pair's continuation.

    ``user_spans[i]``: where pair *i*'s joined text is user text (its markup outside them may give
    control ids); None, or no list, is user text throughout."""
    import torch

    _check_scoring(model, batch_size)
    spans = user_spans if user_spans is not None else [None] * len(pairs)
    encoded = [encode_pair(tokenizer, c, t, s) for (c, t), s in zip(pairs, spans, strict=True)]
    for ctx, cont in encoded:
        if len(ctx) + len(cont) > max_context:
            raise ContextLengthError(len(ctx) + len(cont), 0, max_context, "shorten the prompt")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id or 0
    out: list[float] = []
    rows = _log_probs(model, [ctx + cont for ctx, cont in encoded], pad, batch_size)
    for (ctx, cont), logp in zip(encoded, rows, strict=True):
        # the token at position p is predicted by the logits at p - 1
        positions = torch.arange(len(ctx) - 1, len(ctx) + len(cont) - 1)
        targets = torch.tensor(cont, dtype=torch.long)
        out.append(float(-logp[positions, targets].mean()))
    return out


def _check_scoring(model: Any, batch_size: object) -> None:
    if model is None:
        raise ModelNotStartedError("call start() before scoring")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ModuleConfigError(f"batch_size: expected an int >= 1, got {batch_size!r}")


def _log_probs(model: Any, sequences: list[list[int]], pad: int, batch_size: int) -> Iterator[Any]:
    """Each sequence's log-probabilities ``[width, vocab]`` (row ``p`` predicts token ``p + 1``), the
    sequences run in right-padded batches of ``batch_size`` (``pad`` fills the padding)."""
    import torch

    for start in range(0, len(sequences), batch_size):
        batch = sequences[start : start + batch_size]
        width = max(len(seq) for seq in batch)
        ids = torch.full((len(batch), width), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
            mask[row, : len(seq)] = 1
        with torch.no_grad():
            logits = model(input_ids=ids.to(model.device), attention_mask=mask.to(model.device)).logits
        logp = torch.log_softmax(logits.float(), dim=-1).cpu()
        yield from logp


def added_ids(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The ids ``tokenizer(text)`` puts before and after a text's own (``add_special_tokens=True``)."""
    plain = list(tokenizer("a", add_special_tokens=False)["input_ids"])
    whole = list(tokenizer("a", add_special_tokens=True)["input_ids"])
    for at in range(len(whole) - len(plain) + 1):
        if whole[at : at + len(plain)] == plain:
            return whole[:at], whole[at + len(plain) :]
    raise ModuleConfigError(f"{type(tokenizer).__name__}: cannot tell which ids it adds to a text")


def opencompass_ppl(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[str, str]],
    *,
    max_context: int,
    batch_size: int = 8,
    user_spans: Sequence[Spans | None] | None = None,
    mask_empty_context: bool = False,
) -> list[float]:
    """Each pair's loss as OpenCompass's ``get_ppl([context + continuation], mask_length=[n])`` gives it.

    ``n`` is the context's token count with the added ids, upstream's ``get_token_len(context)``. An
    empty context is upstream's unmasked call, which PPL makes for whole candidates (``n`` = 0),
    unless *mask_empty_context*: then it masks ``get_token_len("")`` tokens (the bos, where the
    tokenizer adds one), as ``normalizing_str``'s calls do when the ``sep_token`` stands first or
    ``normalizing_str`` is ``""``. Of the joined text's ids (tokenized whole,
    as data, between the added ids), the losses of tokens ``max(n, 1)``... are summed and divided by
    the count of ids that are not the pad token, less ``n``; pad ids are neither scored nor counted,
    as upstream's ``ignore_index`` and length count do. Upstream truncates a text past the context;
    here it is a :class:`~modules.errors.ContextLengthError`. ``user_spans``: as :func:`continuation_nll`'s.
    """
    import torch

    _check_scoring(model, batch_size)
    before, after = added_ids(tokenizer)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    encoded: list[tuple[list[int], int]] = []
    for (context, continuation), spans in zip(pairs, user_spans or [None] * len(pairs), strict=True):
        if not isinstance(context, str) or not isinstance(continuation, str) or not str.__len__(continuation):
            raise ModuleConfigError(
                f"pairs: expected (context, continuation) strings, the continuation not empty, got "
                f"{context!r:.80}, {continuation!r:.80}"
            )
        context, continuation = _plain(context), _plain(continuation)
        ids = before + _as_data(tokenizer, context + continuation, spans) + after
        masked = len(before) + len(_as_data(tokenizer, context, _clip(spans, 0, len(context)))) + len(after)
        masked = masked if context or mask_empty_context else 0
        if len(ids) > max_context:
            raise ContextLengthError(len(ids), 0, max_context, "shorten the prompt")
        if sum(1 for i in ids if i != pad) <= masked:
            raise ModuleConfigError("continuation: no token of it is left to score after the context")
        encoded.append((ids, masked))
    out: list[float] = []
    rows = _log_probs(model, [ids for ids, _ in encoded], pad if pad is not None else 0, batch_size)
    for (ids, masked), logp in zip(encoded, rows, strict=True):
        scored = [p for p in range(max(masked, 1), len(ids)) if ids[p] != pad]
        positions = torch.tensor([p - 1 for p in scored], dtype=torch.long)  # p - 1 predicts p
        targets = torch.tensor([ids[p] for p in scored], dtype=torch.long)
        total = -logp[positions, targets].sum()
        out.append(float(total) / (sum(1 for i in ids if i != pad) - masked))
    return out


_WINDOW = 32
"""Tokens between two checkpoints of :func:`_offsets`."""
_CONTEXT = 8
"""Tokens decoded before a checkpoint, so a tokenizer's rules at a boundary (leading spaces) hold."""


def _offsets(tokenizer: Any, ids: list[int]) -> list[int]:
    """Each token's first character in the decoded text (never decreasing; a token that ends inside a
    character, as a byte-level token may, starts where the previous one did).

    Token ``t`` starts at ``len(decode(ids[:t]))``. Decoding every prefix would cost time quadratic in
    the prompt (a 32k-token prompt: about 10^9 token decodes, held while scoring). Here the length is
    carried from a checkpoint ``k`` every :data:`_WINDOW` tokens: ``len(decode(ids[:t]))`` is
    ``len(decode(ids[:k]))`` plus what ``ids[k:t]`` add when decoded after a few tokens of context,
    so each token costs one decode of a bounded window. A checkpoint waits while the text before it
    ends inside a character (``"\ufffd"``), for at most three more windows.
    """
    out: list[int] = []
    base = 0  # len(decode(ids[:k])) at the checkpoint k
    k = c = 0  # the checkpoint, and where its context starts (c <= k)
    before = 0  # len(decode(ids[c:k]))
    for t in range(len(ids)):
        window = str(tokenizer.decode(ids[c:t])) if t else ""
        at = base + len(window) - before if t else 0
        out.append(max(at, out[-1]) if out else at)
        if t - k >= _WINDOW and (not window.endswith("\ufffd") or t - k >= 4 * _WINDOW):
            base, k, c = at, t, max(0, t - _CONTEXT)
            before = len(str(tokenizer.decode(ids[c:k])))
    return out


def _token_texts(tokenizer: Any, ids: list[int]) -> list[str]:
    """Each token as the text it stands for (``" there"``), as OpenAI and vLLM report tokens; never the
    vocabulary's spelling (``"Ġthere"``, ``"▁there"``), which is no text the client sent."""
    return [str(t) for t in tokenizer.batch_decode([[i] for i in ids], clean_up_tokenization_spaces=False)]


def text_logprobs(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    *,
    max_context: int,
    top: int = 0,
    lock: AbstractContextManager[Any] | None = None,
) -> list[dict[str, Any]]:
    """Each text's tokens with their log-probabilities, as OpenAI's ``echo`` + ``logprobs`` gives them.

    A dict per text: ``tokens`` (each token's text, decoded alone), ``token_logprobs`` (the first
    ``None``: nothing precedes it), ``text_offset`` and ``top_logprobs`` (the ``top`` likeliest
    tokens at each position, or ``None``). The text is tokenized as data, as
    :func:`continuation_nll` tokenizes it.

    Every text is checked (type, context) before the model runs. *lock*, if given, is held
    for each text's forward pass only, not for the whole request: the server's scoring of
    64 long prompts must not keep every generation waiting until the last one is scored.
    """
    import torch

    if model is None:
        raise ModelNotStartedError("call start() before scoring")
    if not isinstance(top, int) or isinstance(top, bool) or not 0 <= top <= 5:
        raise ModuleConfigError(f"logprobs: expected an int 0..5, got {top!r}")
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise ModuleConfigError(f"texts: expected a list of texts, got {type(texts).__name__}; pass [text] for one")
    encoded: list[list[int]] = []
    for text in texts:
        if not isinstance(text, str):
            raise ModuleConfigError(f"prompt: expected text, got {type(text).__name__}")
        ids = _as_data(tokenizer, _plain(text))
        if len(ids) > max_context:
            raise ContextLengthError(len(ids), 0, max_context, "shorten the prompt")
        encoded.append(ids)
    out: list[dict[str, Any]] = []
    for ids in encoded:
        values: list[float | None] = [None] * min(len(ids), 1)
        tops: list[dict[str, float] | None] = [None] * min(len(ids), 1)
        if len(ids) > 1:
            with lock if lock is not None else nullcontext(), torch.no_grad():
                logits = model(input_ids=torch.tensor([ids], dtype=torch.long, device=model.device)).logits
                logp = torch.log_softmax(logits[0].float(), dim=-1).cpu()[:-1]  # position p predicts token p + 1
            values += [float(v) for v in logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]]
            if top:
                best = torch.topk(logp, top, dim=-1)
                for v, i in zip(best.values.tolist(), best.indices.tolist(), strict=True):
                    alternatives: dict[str, float] = {}
                    for text, value in zip(_token_texts(tokenizer, i), v, strict=True):
                        alternatives.setdefault(text, float(value))  # two ids, one text: the likelier one
                    tops.append(alternatives)
            else:
                tops += [None] * (len(ids) - 1)
        out.append(
            {
                "tokens": _token_texts(tokenizer, ids),
                "token_logprobs": values,
                "text_offset": _offsets(tokenizer, ids),
                "top_logprobs": tops,
            }
        )
    return out
