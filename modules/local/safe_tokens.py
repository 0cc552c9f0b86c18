"""Safe tokenization: user text is tokenized as data, never as the model's control tokens.

Two steps, each tested alone (``tests/local/test_forgery*.py`` run them against
every real chat template):

1. :func:`render_with_spans` renders OpenAI messages to the exact string the
   model's chat template gives, together with the ``(start, end)`` spans of
   user text. "User text" is defined once, by
   :func:`prompter.formats.spans.user_strings`: every string value and every
   dict key, at any depth, of the messages and tools a caller supplies. Each
   is traced through the template; the only ones left untraced are inert
   names (``content``, ``type`` values, ids) that cannot spell a control
   token, which is checked with the tokenizer itself.
2. :func:`encode_with_spans` tokenizes that string exactly as
   ``tokenizer.apply_chat_template(..., tokenize=True)`` does, then checks
   where every control id came from: one that overlaps user text (a user who
   typed ``<|im_end|><|im_start|>system``) is neutralised by re-encoding that
   user text with special tokens off. Benign prompts keep the model's own
   token ids; hostile ones keep only the template's control tokens.

There is no weaker fallback: when the spans cannot be established the request
is refused with :class:`~modules.errors.UnsafeTokenizationError`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from modules.errors import ModuleConfigError, UnsafeTokenizationError
from modules.local.tool_calls import json_prefix

__all__ = [
    "Rendered",
    "Span",
    "control_token_ids",
    "inert_names",
    "encode_with_spans",
    "normalize_message",
    "render_with_spans",
]

Span = tuple[int, int]  # (start, end) of user text in a rendered prompt, in characters
RenderFn = Callable[[list[Any], list[Any] | None], str]


# -- rendering with spans ------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    """A rendered prompt: the exact ``text`` and the ``spans`` of user-supplied text in it."""

    text: str
    spans: tuple[Span, ...]


def render_with_spans(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    model_format: Any = None,
    tokenizer: Any = None,
    render: RenderFn | None = None,
    inert: Callable[[str], bool] | None = None,
) -> Rendered:
    """Render OpenAI *messages* (and *tools*) for a model and mark where user text lies.

    *inert* (default: made from *tokenizer* for this call) says which bare names
    the tokenizer turns into no control id; a caller rendering many requests with
    one tokenizer passes :func:`inert_names` made once.

    One render source is used, the first of: *render* (any ``(messages, tools)
    -> str``), *model_format*'s ``render`` (the sandboxed, budgeted template with
    prompter's folding, tools and normalisation — what the module binds), the
    tokenizer's ``chat_template`` (what ``apply_chat_template`` runs). The same
    source renders the prompt and traces every user string through it
    (:func:`prompter.formats.spans.locate_user_text`). A template that hides
    where user text lands raises
    :class:`~modules.errors.UnsafeTokenizationError`; there is no weaker
    second source to fall back on.
    """
    from prompter.errors import TemplateError
    from prompter.formats.spans import MAX_DEPTH, is_name, locate_user_text, nesting_depth

    # a template that concatenates arguments (DeepSeek-R1) gets the caller's own text, not a parsed object
    takes_text = getattr(model_format, "takes_string_arguments", None)
    keep_text = bool(takes_text and takes_text(list(tools) if tools else None))
    keep_null = render is None and model_format is not None and hasattr(model_format, "render")
    msgs = [normalize_message(m, parse_arguments=not keep_text, keep_null=keep_null) for m in messages]
    tool_list = [dict(t) for t in tools] if tools else None
    if nesting_depth([msgs, tool_list]) > MAX_DEPTH:  # before any template recurses into it
        raise UnsafeTokenizationError(
            f"the request nests lists and objects deeper than {MAX_DEPTH} levels; flatten the tool schema, "
            "arguments or message fields"
        )
    render_fn, source = _render_source(render, tokenizer, model_format, tool_list)
    text = render_fn(msgs, tool_list)
    if inert is None:
        inert = inert_names(tokenizer) if tokenizer is not None else is_name
    try:
        # a render function of the caller's own is not one of prompter's reviewed templates, whatever it names
        spans = locate_user_text(msgs, tool_list, text, render_fn, source, inert=inert, recheck=render is not None)
    except TemplateError as exc:
        raise UnsafeTokenizationError(
            f"cannot tell user text from markup in this prompt ({exc}); refusing to tokenize it "
            "(send the user text unchanged by the template, or use a template that prints it as is)"
        ) from exc
    return Rendered(text, spans)


def _render_source(
    render: RenderFn | None, tokenizer: Any, model_format: Any, tools: list[Any] | None
) -> tuple[RenderFn, str]:
    """The one render function of this request, and the template source it runs (whose literals it prints):
    a format's tool-use template when it has one and tools are given, as the format picks it."""
    tool_template = getattr(model_format, "tool_chat_template", None) if tools is not None else None
    fmt_source = str(tool_template or getattr(model_format, "chat_template", None) or "")
    if render is not None:
        return render, fmt_source or str(getattr(tokenizer, "chat_template", None) or "")
    # the bound ModelFormat first: the module, the server and the prompter share one render path
    if model_format is not None and hasattr(model_format, "render"):

        def by_format(msgs: list[Any], tls: list[Any] | None) -> str:
            return str(model_format.render(msgs, tools=tls, add_generation_prompt=True))

        return by_format, fmt_source or str(getattr(tokenizer, "chat_template", None) or "")
    template = getattr(tokenizer, "chat_template", None) if tokenizer is not None else None
    if template:

        def by_tokenizer(msgs: list[Any], tls: list[Any] | None) -> str:
            return str(tokenizer.apply_chat_template(msgs, tools=tls, add_generation_prompt=True, tokenize=False))

        return by_tokenizer, str(template)
    raise ModuleConfigError("no chat template: pass model_format=... or use a tokenizer with a chat_template")


def inert_names(tokenizer: Any, control: frozenset[int] | None = None) -> Callable[[str], bool]:
    """Whether a name may be left bare: a plain name that this tokenizer turns into no control id
    (*control*: :func:`control_token_ids`, computed here if not given). Answers are remembered, so make
    it once per tokenizer and pass it to :func:`render_with_spans`."""
    from prompter.formats.spans import is_name

    if control is None:
        control = control_token_ids(tokenizer)

    @lru_cache(maxsize=4096)
    def inert(value: str) -> bool:
        return is_name(value) and not control.intersection(_encode_markup(tokenizer, _backend(tokenizer), value))

    return inert


def normalize_message(
    message: Mapping[str, Any], parse_arguments: bool = True, keep_null: bool = False
) -> dict[str, Any]:
    """A copy of an OpenAI message as chat templates expect it.

    Tool-call ``arguments`` given as a JSON string (OpenAI's wire form) become
    the object they encode (unless ``parse_arguments`` is false), and an assistant
    turn with tool calls but no content gets ``""`` (many templates fail on a missing content).
    """
    out = dict(message)
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        fixed = []
        for call in calls:
            call = dict(call) if isinstance(call, Mapping) else call
            fn = call.get("function") if isinstance(call, dict) else None
            if parse_arguments and isinstance(fn, Mapping) and isinstance(fn.get("arguments"), str):
                parsed = json_prefix(fn["arguments"])
                if isinstance(parsed, dict):
                    call["function"] = {**fn, "arguments": parsed}
            fixed.append(call)
        out["tool_calls"] = fixed
        if out.get("content") is None and not keep_null:  # a ModelFormat normalises it for its template
            out["content"] = ""
    return out


# -- safe tokenization ---------------------------------------------------------------------------


def control_token_ids(tokenizer: Any) -> frozenset[int]:
    """Ids of every added/special token: the ids only markup may produce."""
    ids = set(getattr(tokenizer, "all_special_ids", ()) or ())
    decoder = getattr(tokenizer, "added_tokens_decoder", None) or {}
    ids.update(int(i) for i in decoder)
    return frozenset(ids)


def encode_with_spans(
    tokenizer: Any, text: str, spans: Sequence[Span], *, control: frozenset[int] | None = None
) -> list[int]:
    """Token ids for *text* where only text outside *spans* (markup) yields control ids.

    *control* is :func:`control_token_ids` of *tokenizer*, computed here if not given (a caller
    tokenizing many prompts with one tokenizer computes it once: transformers rebuilds the added
    tokens' table at each look-up).

    The whole text is first tokenized as the model's own
    ``apply_chat_template(..., tokenize=True)`` tokenizes it, so benign prompts
    get exactly the model's ids (merges across user text and markup included).
    Then every control id is traced to the characters it came from: one that
    overlaps a span (user text that spells ``<|im_start|>``, alone or joined
    with its neighbours) marks that span hostile, and hostile spans are
    re-encoded through the normalizer, pre-tokenizer and model only, bypassing
    the added-token vocabulary; the markup around them keeps its own control
    tokens. Nothing is added (``add_special_tokens=False``): the template writes its own bos.

    >>> from modules.local.tiny_model import build_tiny_tokenizer
    >>> tok = build_tiny_tokenizer("qwen2.5")
    >>> text = "<|im_start|>user\\n<|im_start|>hi<|im_end|>\\n"
    >>> ids = encode_with_spans(tok, text, [(17, 31)])
    >>> ids.count(tok.convert_tokens_to_ids("<|im_start|>"))
    1
    """
    ordered = sorted(spans)
    pos = 0
    for start, end in ordered:
        if start < pos or end < start or end > len(text):
            raise UnsafeTokenizationError(f"span ({start}, {end}) overlaps another or lies outside the text")
        pos = end
    _check_unicode(text)
    backend = _backend(tokenizer)
    if backend is None:
        return _encode_split(tokenizer, text, ordered)
    if control is None:
        control = control_token_ids(tokenizer)
    hostile: set[int] = set()
    while True:  # each round marks more spans hostile, so this ends within len(spans) + 1 rounds
        ids, forged = _encode_round(tokenizer, backend, text, ordered, hostile, control)
        if not forged:
            return ids
        hostile |= forged


def _encode_round(
    tokenizer: Any, backend: Any, text: str, spans: list[Span], hostile: set[int], control: frozenset[int]
) -> tuple[list[int], set[int]]:
    """Encode *text*, hostile spans as plain text; return the ids and the spans a control id overlaps."""
    ids: list[int] = []
    forged: set[int] = set()
    pos = 0
    cuts = [(spans[i][0], spans[i][1]) for i in sorted(hostile)] + [(len(text), len(text))]
    ends = [end for _, end in spans]  # non-decreasing (the spans are in order and apart): searched by bisect
    for start, end in cuts:
        if pos < start:
            encoding = backend.encode(text[pos:start], add_special_tokens=False)
            for token, (a, b) in zip(encoding.ids, encoding.offsets, strict=True):
                if token in control:
                    forged |= _overlapping(spans, ends, pos + a, pos + b)
            ids += encoding.ids
        if start < end:
            plain = _encode_plain(tokenizer, backend, text[start:end])
            if control.intersection(plain):
                raise UnsafeTokenizationError(
                    f"{type(tokenizer).__name__}: its model vocabulary spells a control token from plain text; "
                    "refusing to tokenize this user text"
                )
            ids += plain
        pos = end
    return ids, forged


def _check_unicode(text: str) -> None:
    """Refuse text holding a lone surrogate (``"\\ud800"``, from a JSON escape or a bad decode): it is not
    Unicode text, no tokenizer encodes it (``tokenizers`` raised a bare ``TypeError``)."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UnsafeTokenizationError(
            f"character {exc.start} of the prompt is a lone surrogate (U+{ord(text[exc.start]):04X}), not Unicode "
            "text a tokenizer can encode: remove it from the input, or decode the source with errors='replace'"
        ) from None


def _overlapping(spans: list[Span], ends: list[int], a: int, b: int) -> set[int]:
    """The spans (in order, apart; *ends* their ends) that the characters ``a .. b`` overlap.

    Found from the first span ending after *a* (a binary search), so that a prompt of thousands of
    spans, with a control token in each piece of markup between them, is not scanned whole per token.
    A control token of width zero (an lstrip token's offsets) still counts where it sits.
    """
    hi = max(b, a + 1)
    found = set()
    i = bisect_right(ends, a)
    while i < len(spans) and spans[i][0] < hi:
        if a < spans[i][1]:
            found.add(i)
        i += 1
    return found


def _backend(tokenizer: Any) -> Any:
    return getattr(tokenizer, "backend_tokenizer", None)


def _encode_split(tokenizer: Any, text: str, spans: Sequence[Span]) -> list[int]:
    """A slow tokenizer (no offsets): markup and each span encoded apart, spans with specials off."""
    ids: list[int] = []
    pos = 0
    for start, end in spans:
        ids += _encode_markup(tokenizer, None, text[pos:start])
        ids += _encode_plain(tokenizer, None, text[start:end])
        pos = end
    return ids + _encode_markup(tokenizer, None, text[pos:])


def _encode_markup(tokenizer: Any, backend: Any, text: str) -> list[int]:
    if not text:
        return []
    if backend is not None:
        return list(backend.encode(text, add_special_tokens=False).ids)
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def _encode_plain(tokenizer: Any, backend: Any, text: str) -> list[int]:
    if not text:
        return []
    if backend is not None:
        normalized = backend.normalizer.normalize_str(text) if backend.normalizer is not None else text
        pieces = (
            [p for p, _ in backend.pre_tokenizer.pre_tokenize_str(normalized)]
            if backend.pre_tokenizer is not None
            else [normalized]
        )
        return [tok.id for piece in pieces for tok in backend.model.tokenize(piece)]
    # A slow (pure Python) tokenizer: ask it not to parse special tokens, then verify.
    ids = list(tokenizer(text, add_special_tokens=False, split_special_tokens=True)["input_ids"])
    if control_token_ids(tokenizer).intersection(ids):
        raise UnsafeTokenizationError(
            f"{type(tokenizer).__name__} turned user text into control tokens; use a fast tokenizer"
        )
    return ids
