"""One training example from one call's arguments, through the inference path.

The prompt ids are not re-derived: they are the ``input_ids`` of the
:class:`~modules.local.request.LocalRequest` that ``module.build_request`` makes for
the same input (the same prompter, the same bound ``ModelFormat``, the same
forgery-safe tokenization). The answer is then rendered by the same format as an
assistant turn after that prompt (``add_generation_prompt=False``), and only the
text after the prompt is tokenized, again with user text (the label) as data::

    input_ids = prompt ids (exactly the inference ids) + ids of (label + the turn's closing text)
    labels    = -100 on the prompt; the ids of the label and of the end-of-turn token(s); -100 after

The answer is tokenized on its own, right after the prompt, because that is how
the model meets it at inference: it generates from the end of the prompt, so the
ids to learn are the ones that start there (a merge across the prompt's last
character would teach ids the model never produces).

The unmasked tokens run up to and including the first stop token (the format's
single-token stop words, the model's eos): what the model must generate before
generation stops. Text the template writes after that (Qwen's ``\\n`` after
``<|im_end|>``) stays in ``input_ids`` but is not learnt. A template that closes
an assistant turn with no stop token at all (GLM-4) gets the first stop word
appended, so that the model learns to stop.

A template that writes the earlier turns differently once an answer follows (Alpaca's
puts a blank line between turns only when another turn comes) keeps the inference
prompt as it is; the answer is then the label, as data, and the first stop word.

Where the chat template marks the assistant's text with ``{% generation %}``,
the mask is transformers' own ``return_assistant_tokens_mask``, mapped onto these ids.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from modules.errors import ModuleConfigError, UnsafeTokenizationError
from modules.local.safe_tokens import Span, encode_with_spans, normalize_message, render_with_spans
from modules.local.training.history import calls_written, common_prefix, history_regions, unmask

__all__ = ["IGNORE_INDEX", "TrainingExample", "TrainingExampleError", "build_training_example", "token_offsets"]

logger = logging.getLogger(__name__)

IGNORE_INDEX = -100
"""The label of a token the loss ignores (PyTorch's ``CrossEntropyLoss`` default)."""

_GENERATION_TAG = re.compile(r"{%-?\s*generation\s*-?%}")


class TrainingExampleError(ModuleConfigError):
    """A training example cannot be built as inference would see it (the message says why and what to do)."""


class TrainingExample(dict[str, list[int]]):
    """``{"input_ids", "attention_mask", "labels"}`` (a dict, as transformers' collators take it).

    The keys are also attributes (``ex.input_ids``); ``prompt_length`` is the number of
    leading ids that are exactly the inference prompt, ``truncated`` whether ``max_length`` cut it.
    """

    prompt_length: int = 0
    truncated: bool = False

    @property
    def input_ids(self) -> list[int]:
        return self["input_ids"]

    @property
    def attention_mask(self) -> list[int]:
        return self["attention_mask"]

    @property
    def labels(self) -> list[int]:
        return self["labels"]


def build_training_example(
    module: Any,
    stop_ids: Sequence[int],
    input: Any,
    history: Sequence[Any] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    label: str | Mapping[str, Any],
    train_on_history: bool = False,
    max_length: int | None = None,
) -> TrainingExample:
    """Build the example for *module* (a ``TrainableModule``); ``stop_ids`` are the ids generation stops at.

    *label* is the answer's text, or the answer as an assistant message (``{"role": "assistant",
    "content": ..., "tool_calls": [...]}``): a tool-call answer is learnt as the template writes it.
    """
    answer = _answer_message(label)
    calls = bool(answer.get("tool_calls"))
    check_options(max_length, train_on_history)
    request = module.build_request(input, history, tools, max_new_tokens=1)
    tokenizer = module.tokenizer
    fmt = module.model_format
    prompt_text: str = request.text
    prompt_ids = list(request.input_ids)
    messages = [dict(m) for m in request.messages]
    tool_list = [dict(t) for t in request.tools] if request.tools else None
    render = _renderer(fmt, tokenizer)
    whole = render_with_spans(
        [*messages, answer], tool_list, model_format=fmt, tokenizer=tokenizer, render=lambda m, t: render(m, t, False)
    )
    cut = len(prompt_text)
    extends = whole.text.startswith(prompt_text)
    if extends:
        tail_text, tail_spans = whole.text[cut:], _shifted(whole.spans, cut)
    elif calls and calls_written(answer, whole.text[common_prefix(whole.text, prompt_text) :]):
        raise TrainingExampleError(
            "the chat template writes the conversation differently once a tool-call answer follows, so the call "
            "cannot be learnt after the inference prompt; give the answer as text, or use another model's template"
        )
    else:
        # The template writes earlier turns differently once an answer follows (Alpaca's separators):
        # the prompt stays the inference prompt, and the answer is what generation would write after it.
        tail_text, tail_spans = answer["content"] or "", [(0, len(answer["content"] or ""))]
    if calls and not calls_written(answer, tail_text):
        raise TrainingExampleError(
            "this model's chat template does not write the answer's tool_calls (it drops them), so the call cannot "
            "be learnt as inference would see it; use a model whose template writes tool calls, or answer in text"
        )
    tail_ids = encode_with_spans(tokenizer, tail_text, tail_spans)
    stops = set(stop_ids)
    tail_labels = _through_first_stop(tail_ids, stops)
    if not stops.intersection(tail_ids):
        closing = _closing_ids(module, tokenizer)
        tail_ids, tail_labels = tail_ids + closing, tail_labels + closing

    labels = [IGNORE_INDEX] * len(prompt_ids) + tail_labels
    ids = prompt_ids + tail_ids
    if train_on_history:
        offsets = token_offsets(tokenizer, prompt_text, prompt_ids)
        for start, end in history_regions(messages, tool_list, render, prompt_text):
            unmask(labels, ids, offsets, start, end, stops, prompt_text)
    if extends and _GENERATION_TAG.search(str(getattr(tokenizer, "chat_template", None) or "")):
        marked = _hf_generation_labels(tokenizer, messages, answer, tool_list, ids, prompt_ids, whole.text, cut)
        if marked is not None:
            labels = marked if train_on_history else [IGNORE_INDEX] * len(prompt_ids) + marked[len(prompt_ids) :]

    example = TrainingExample(input_ids=ids, attention_mask=[1] * len(ids), labels=labels)
    example.prompt_length = len(prompt_ids)
    if max_length is not None and len(ids) > max_length:
        for key in ("input_ids", "attention_mask", "labels"):
            example[key] = example[key][:max_length]
        example.truncated = True
    return example


def check_options(max_length: Any, train_on_history: Any) -> None:
    if max_length is not None and (type(max_length) is not int or max_length < 2):
        raise TrainingExampleError(f"max_length: expected an int >= 2, got {max_length!r}")
    if type(train_on_history) is not bool:
        raise TrainingExampleError(f"train_on_history: expected True or False, got {train_on_history!r}")


# -- rendering ---------------------------------------------------------------------------------------


def _answer_message(label: Any) -> dict[str, Any]:
    """The answer as a fresh OpenAI assistant message, a message label normalised as the history's turns are."""
    if isinstance(label, str):
        return {"role": "assistant", "content": str.__str__(label)}  # the text itself: a str subclass runs nothing
    if not isinstance(label, Mapping):
        raise TrainingExampleError(
            f"label: expected the answer as a str or an assistant message dict, got {type(label).__name__}"
        )
    from prompter.messages import message_from_dict
    from prompter.render.openai import message_dict

    message = message_from_dict(label, "label")  # a MessageError names what is wrong with it
    if message.role != "assistant" or not isinstance(message.content, str):
        raise TrainingExampleError(
            "label: a message answer must be the assistant's, with text content (or None beside tool_calls); "
            f"got role {message.role!r}"
        )
    answer = message_dict(message, keep_null=True, signatures=True)
    if isinstance(answer.get("content"), str):
        answer["content"] = str.__str__(answer["content"])
    return answer


def _renderer(fmt: Any, tokenizer: Any) -> Any:
    """``render(messages, tools, add_generation_prompt)`` through the module's one render source."""
    if fmt is not None and hasattr(fmt, "render"):

        def by_format(msgs: list[Any], tls: list[Any] | None, gen: bool) -> str:
            return str(fmt.render(msgs, tools=tls, add_generation_prompt=gen))

        return by_format

    def by_tokenizer(msgs: list[Any], tls: list[Any] | None, gen: bool) -> str:
        return str(tokenizer.apply_chat_template(msgs, tools=tls, add_generation_prompt=gen, tokenize=False))

    return by_tokenizer


def _shifted(spans: Sequence[Span], cut: int) -> list[Span]:
    out = []
    for start, end in spans:
        if end <= cut:
            continue
        if start < cut:
            raise UnsafeTokenizationError("user text straddles the end of the prompt; refusing to tokenize the answer")
        out.append((start - cut, end - cut))
    return out


def _closing_ids(module: Any, tokenizer: Any) -> list[int]:
    """The ids of the format's first stop word (or eos): the turn's end the template did not write."""
    fmt = module.model_format
    words = [w for w in getattr(fmt, "stop_words", ()) or () if w]
    if words:
        return list(tokenizer(words[0], add_special_tokens=False)["input_ids"])
    if tokenizer.eos_token_id is not None:
        return [int(tokenizer.eos_token_id)]
    raise TrainingExampleError(
        "the chat template ends an assistant turn with no stop token and the model has no stop words or eos: "
        "the model could never learn to stop; bind a model_format with stop_words"
    )


# -- masks ----------------------------------------------------------------------------------------------


def _through_first_stop(ids: list[int], stops: set[int]) -> list[int]:
    """Labels that learn every id up to and including the first stop id, and ignore the rest."""
    for i, tid in enumerate(ids):
        if tid in stops:
            return ids[: i + 1] + [IGNORE_INDEX] * (len(ids) - i - 1)
    return list(ids)


def token_offsets(tokenizer: Any, text: str, ids: Sequence[int]) -> list[Span]:
    """The ``(start, end)`` characters of *text* that each of *ids* (an encoding of *text*) covers."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        encoding = backend.encode(text, add_special_tokens=False)
        if list(encoding.ids) == list(ids):
            return [(int(a), int(b)) for a, b in encoding.offsets]
    # The ids differ from a plain encoding (forged control tokens were neutralised): align by decoding.
    offsets: list[Span] = []
    previous = 0
    for i in range(len(ids)):
        upto = len(tokenizer.decode(list(ids[: i + 1]), skip_special_tokens=False, clean_up_tokenization_spaces=False))
        offsets.append((previous, upto))
        previous = upto
    if previous != len(text):
        raise TrainingExampleError(
            "cannot align this tokenizer's ids with the prompt text (decoding does not give the text back); "
            "train_on_history needs a tokenizer that decodes losslessly"
        )
    return offsets


def _hf_generation_labels(
    tokenizer: Any,
    messages: list[dict[str, Any]],
    answer: dict[str, Any],
    tools: list[Any] | None,
    ids: list[int],
    prompt_ids: list[int],
    text: str,
    cut: int,
) -> list[int] | None:
    """transformers' ``return_assistant_tokens_mask`` for a template with ``{% generation %}``, on our ids; None
    when transformers renders another text (tools the format folds in, arguments it parses): no mask to carry."""
    conversation = [normalize_message(m) for m in [*messages, answer]]
    options: dict[str, Any] = {"tools": tools, "add_generation_prompt": False}
    if tokenizer.apply_chat_template(conversation, tokenize=False, **options) != text:
        logger.warning("transformers renders this example differently from the model's format: mask from the spans")
        return None
    out = tokenizer.apply_chat_template(
        conversation, tokenize=True, return_dict=True, return_assistant_tokens_mask=True, **options
    )
    hf_ids, mask = list(out["input_ids"]), list(out["assistant_masks"])
    if hf_ids == ids:
        return [t if m else IGNORE_INDEX for t, m in zip(ids, mask)]
    # Our ids differ (neutralised user text, or the answer tokenized apart): carry the marked characters over.
    marked = [span for span, m in zip(token_offsets(tokenizer, text, hf_ids), mask) if m]
    prompt_text = text[:cut]
    ours = token_offsets(tokenizer, prompt_text, prompt_ids)
    tail_ids = ids[len(prompt_ids) :]
    ours += [(a + cut, b + cut) for a, b in token_offsets(tokenizer, text[cut:], tail_ids)][: len(tail_ids)]
    return [t if any(a <= s < b for a, b in marked) else IGNORE_INDEX for t, (s, _e) in zip(ids, ours)]
