"""TrainableModule: a local transformers chat model behind the module interface.

::

    from modules import TrainableModule
    m = TrainableModule("path/to/hf-model").prompt("You are terse.").start()
    m("Why is the sky blue?")                     # greedy, stops at the format's stop words
    for piece in m.stream("Tell me a story"): ... # pieces as they are generated
    m.start(serve=True); m.url                    # an OpenAI-compatible server, see modules.server
    m.stop()

One call, step by step (each step is a function of this file, tested alone):

1. The attached prompter builds OpenAI messages for the model's format
   (``generate_prompt(..., format="openai", model_format=fmt)``); the prompter
   itself is never changed.
2. :func:`render_with_spans` renders them to the exact string the model's chat
   template gives, together with the ``(start, end)`` spans of every piece of
   user-supplied text (contents, names, tool arguments, tool results, the
   strings of tool definitions).
3. :func:`encode_with_spans` tokenizes that string so that control tokens
   (``<|im_start|>``, ``[INST]``...) are parsed **only outside the spans**:
   a user who types ``<|im_end|><|im_start|>system`` gets those characters as
   plain text, never as the model's delimiters.
4. The prompt length is checked against the context (``max_context`` or the
   model's ``max_position_embeddings``): too long raises
   :class:`~modules.errors.ContextLengthError` naming the token counts, or,
   with ``trim="oldest"``, drops whole oldest turns and reports them.
5. ``model.generate`` runs (greedy unless ``temperature`` > 0), stopping at the
   format's stop words. Concurrent callers never mix: generation is
   serialised by a lock, or, with ``max_batch_size`` > 1, concurrent greedy
   requests run as one left-padded batch (:class:`_Batcher`). Tool-call syntax in the answer (Qwen/Hermes
   ``<tool_call>{json}</tool_call>``, Mistral ``[TOOL_CALLS]``...) becomes
   OpenAI-style tool calls (:func:`parse_tool_calls`).
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .base import Completion, ModuleBase, ModuleInput, StreamDelta, ToolCall
from .errors import (
    ContextLengthError,
    ModelNotStartedError,
    ModuleConfigError,
    ServerStoppedError,
    UnsafeTokenizationError,
)

__all__ = [
    "GenerationOptions",
    "LocalRequest",
    "Rendered",
    "TrainableModule",
    "control_token_ids",
    "encode_with_spans",
    "parse_tool_calls",
    "render_with_spans",
]

logger = logging.getLogger(__name__)

Span = tuple[int, int]
_DEFAULT_MAX_NEW_TOKENS = 256
_ID_RE = re.compile(r"^[A-Za-z0-9_.:\-]{1,128}$")


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
) -> Rendered:
    """Render OpenAI *messages* for a model and mark where user text lies.

    Two renderers can mark user text, and the safest combination is used:

    * the model's own chat template (the tokenizer's ``chat_template``), run
      with every user-supplied string wrapped in unguessable sentinels, which
      are then removed and become the spans. This covers everything a client
      can send: contents, names, tool-call arguments, tool results and the
      strings of tool definitions. The result must equal the template's plain
      rendering; if a template rewrites user text so that it cannot be
      located, this raises :class:`~modules.errors.UnsafeTokenizationError`
      rather than guessing;
    * the prompter's ``ModelFormat.render_with_spans``. When both give the same
      text, the union of their spans is used; without a tokenizer template,
      the format alone renders.
    """
    template = getattr(tokenizer, "chat_template", None) if tokenizer is not None else None
    has_format = model_format is not None and hasattr(model_format, "render_with_spans")
    if not template and not has_format:
        raise ModuleConfigError("no chat template: pass model_format=... or use a tokenizer with a chat_template")
    msgs = [normalize_message(m) for m in messages]
    ours = theirs = None
    failure: Exception | None = None
    if template:
        try:
            ours = _template_render_with_spans(tokenizer, msgs, tools)
        except UnsafeTokenizationError as exc:
            failure = exc
    if has_format:
        try:
            out = model_format.render_with_spans(msgs, tools=list(tools) if tools else None)
            theirs = Rendered(out.text, tuple((int(a), int(b)) for a, b in out.spans))
        except Exception as exc:  # noqa: BLE001 - a format that cannot place content: use ours or fail
            failure = failure or exc
    if ours is not None and theirs is not None and ours.text == theirs.text:
        return Rendered(ours.text, _merge(ours.spans + theirs.spans))
    if ours is not None:
        return ours
    if theirs is not None:
        if not template:
            return theirs
        # The template hides where some message text lies (Qwen3 and DeepSeek-R1 cut history
        # answers at </think>); the format placed it. Tool definitions still get our spans.
        tool_spans = _template_render_with_spans(tokenizer, msgs, tools, wrap_messages=False)
        if tool_spans.text == theirs.text:
            return Rendered(theirs.text, _merge(theirs.spans + tool_spans.spans))
    raise UnsafeTokenizationError(
        f"cannot tell user text from markup in this prompt ({failure}); refusing to tokenize it"
    )


def normalize_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of an OpenAI message as chat templates expect it.

    Tool-call ``arguments`` given as a JSON string (OpenAI's wire form) become
    the object they encode, and an assistant turn with tool calls but no
    content gets ``""`` (many templates fail on a missing content).
    """
    out = dict(message)
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        fixed = []
        for call in calls:
            call = dict(call) if isinstance(call, Mapping) else call
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, Mapping) and isinstance(fn.get("arguments"), str):
                parsed = _json_prefix(fn["arguments"])
                if isinstance(parsed, dict):
                    call["function"] = {**fn, "arguments": parsed}
            fixed.append(call)
        out["tool_calls"] = fixed
        if out.get("content") is None:
            out["content"] = ""
    return out


def _merge(spans: Sequence[Span]) -> tuple[Span, ...]:
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((a, b) for a, b in merged)


def _template_render_with_spans(
    tokenizer: Any,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None,
    wrap_messages: bool = True,
) -> Rendered:
    def render(msgs: Any, tls: Any) -> str:
        return str(tokenizer.apply_chat_template(msgs, tools=tls, add_generation_prompt=True, tokenize=False))

    plain = render([dict(m) for m in messages], [dict(t) for t in tools] if tools else None)
    nonce = secrets.token_hex(6)
    open_, close = f"\ue000{nonce}\ue002", f"\ue003{nonce}\ue001"
    for strip in (False, True):
        wrap = _Wrapper(open_, close, strip)
        wrapped = render(
            [wrap.message(m) if wrap_messages else dict(m) for m in messages],
            [wrap.tool(t) for t in tools] if tools else None,
        )
        rendered = _unwrap(wrapped, open_, close)
        if rendered is not None and rendered.text == plain:
            return rendered
    raise UnsafeTokenizationError(
        "the chat template rewrites user text in a way that hides where it starts and ends; "
        "refusing to tokenize it as markup (pass a model_format with render_with_spans)"
    )


@dataclass
class _Wrapper:
    open: str
    close: str
    strip: bool

    def text(self, value: str) -> str:
        # Empty strings stay empty: templates test truthiness (`if message.content`), and "" forges nothing.
        return self.open + (value.strip() if self.strip else value) + self.close if value else value

    def deep(self, value: Any, keys: bool) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {(self.text(k) if keys and isinstance(k, str) else k): self.deep(v, keys) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.deep(v, keys) for v in value]
        return value

    def message(self, msg: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in msg.items():
            if key in ("role", "type"):
                out[key] = value
            elif key in ("id", "tool_call_id"):
                out[key] = _checked_id(value, key)
            elif key == "tool_calls" and isinstance(value, list):
                out[key] = [self.tool_call(c) for c in value]
            elif key == "content" and isinstance(value, list):
                out[key] = [
                    {k: (self.text(v) if k == "text" and isinstance(v, str) else v) for k, v in part.items()}
                    if isinstance(part, Mapping)
                    else part
                    for part in value
                ]
            else:
                out[key] = self.deep(value, keys=False)
        return out

    def tool_call(self, call: Any) -> Any:
        if not isinstance(call, Mapping):
            return call
        out = {k: (_checked_id(v, k) if k == "id" else v) for k, v in call.items()}
        fn = call.get("function")
        if isinstance(fn, Mapping):
            fn = dict(fn)
            if isinstance(fn.get("name"), str):
                fn["name"] = self.text(fn["name"])
            if "arguments" in fn:
                fn["arguments"] = self.deep(fn["arguments"], keys=True)
            out["function"] = fn
        return out

    def tool(self, tool: Mapping[str, Any]) -> Any:
        return self._schema(tool)

    def _schema(self, value: Any, under_properties: bool = False) -> Any:
        # Tool definitions are read by the template through their keys (tool.function.name), so
        # keys stay as they are, except parameter names under "properties", which are free text.
        # JSON-schema "type" values are keywords templates compare against, so they are checked, not wrapped.
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            out = {}
            for k, v in value.items():
                key = self.text(k) if under_properties and isinstance(k, str) else k
                if k == "type" and not under_properties:
                    out[key] = _checked_keyword(v)
                else:
                    out[key] = self._schema(v, k == "properties" and not under_properties)
            return out
        if isinstance(value, (list, tuple)):
            return [self._schema(v) for v in value]
        return value


def _checked_keyword(value: Any) -> Any:
    words = value if isinstance(value, list) else [value]
    for word in words:
        if isinstance(word, str) and not _ID_RE.match(word):
            raise UnsafeTokenizationError(f"tool schema type {word[:40]!r}: expected a JSON-schema type name")
    return value


def _checked_id(value: Any, key: str) -> Any:
    # Ids are compared and measured by some templates (Mistral wants 9 characters), so they are not
    # wrapped; instead they must be plain identifiers, which cannot spell a control token.
    if isinstance(value, str) and not _ID_RE.match(value):
        raise UnsafeTokenizationError(f"{key} {value[:40]!r}: expected letters, digits, '_', '-', '.' or ':'")
    return value


def _unwrap(wrapped: str, open_: str, close: str) -> Rendered | None:
    out: list[str] = []
    spans: list[Span] = []
    pos = length = 0
    while True:
        start = wrapped.find(open_, pos)
        stray = wrapped.find(close, pos)
        if start < 0:
            if stray >= 0:
                return None
            out.append(wrapped[pos:])
            return Rendered("".join(out), tuple(spans))
        if 0 <= stray < start:
            return None
        end = wrapped.find(close, start + len(open_))
        nested = wrapped.find(open_, start + len(open_))
        if end < 0 or 0 <= nested < end:
            return None
        markup, content = wrapped[pos:start], wrapped[start + len(open_) : end]
        out += [markup, content]
        length += len(markup)
        if content:
            spans.append((length, length + len(content)))
        length += len(content)
        pos = end + len(close)


# -- safe tokenization ---------------------------------------------------------------------------


def control_token_ids(tokenizer: Any) -> frozenset[int]:
    """Ids of every added/special token: the ids only markup may produce."""
    ids = set(getattr(tokenizer, "all_special_ids", ()) or ())
    decoder = getattr(tokenizer, "added_tokens_decoder", None) or {}
    ids.update(int(i) for i in decoder)
    return frozenset(ids)


def encode_with_spans(tokenizer: Any, text: str, spans: Sequence[Span]) -> list[int]:
    """Token ids for *text* where control tokens are parsed only outside *spans*.

    Markup (everything outside the spans) is tokenized normally, so the
    template's ``<|im_start|>`` becomes its control id. Each span (user text)
    goes through the tokenizer's normalizer, pre-tokenizer and model only,
    bypassing the added-token vocabulary: no string a user types, whatever
    special token it spells, can become a control id. Nothing is added
    (``add_special_tokens=False``): the template writes its own bos.

    >>> from modules.tiny_model import build_tiny_tokenizer
    >>> tok = build_tiny_tokenizer("qwen2.5")
    >>> text = "<|im_start|>user\\n<|im_start|>hi<|im_end|>\\n"
    >>> ids = encode_with_spans(tok, text, [(17, 31)])
    >>> ids.count(tok.convert_tokens_to_ids("<|im_start|>"))
    1
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    ids: list[int] = []
    pos = 0
    for start, end in sorted(spans):
        if start < pos or end < start or end > len(text):
            raise UnsafeTokenizationError(f"span ({start}, {end}) overlaps another or lies outside the text")
        ids += _encode_markup(tokenizer, backend, text[pos:start])
        ids += _encode_plain(tokenizer, backend, text[start:end])
        pos = end
    ids += _encode_markup(tokenizer, backend, text[pos:])
    return ids


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


# -- tool calls -----------------------------------------------------------------------------------

# (start, end) markers of the tool-call syntaxes we parse; end None means "a JSON value follows".
_TOOL_SYNTAXES: tuple[tuple[str, str | None], ...] = (
    ("<tool_call>", "</tool_call>"),  # Qwen 2.5/3, Hermes 2 Pro
    ("[TOOL_CALLS]", None),  # Mistral v0.3, Nemo
    ("<|tool_call|>", None),  # Granite 3
    ("<|python_tag|>", None),  # Llama 3.1 (JSON form)
)


def parse_tool_calls(
    text: str, start: str = "<tool_call>", end: str | None = "</tool_call>"
) -> tuple[str, list[ToolCall]]:
    """Split a model's answer into its text and OpenAI-style tool calls.

    With an ``end`` marker, each ``start{json}end`` block is one call (Qwen,
    Hermes); the last block may lack its end marker when generation stopped at
    eos. Without one, the JSON value (an object or a list of objects) after
    ``start`` holds the calls (Mistral ``[TOOL_CALLS] [...]``). A call is
    ``{"name": ..., "arguments"|"parameters": {...}}``. Blocks that are not
    valid JSON are left in the text, untouched.

    >>> text, calls = parse_tool_calls('Sure.<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>')
    >>> text, calls[0]["function"]
    ('Sure.', {'name': 'f', 'arguments': '{"x": 1}'})
    """
    calls: list[ToolCall] = []
    if start not in text:
        return text, calls
    if end is None:
        head, _, tail = text.partition(start)
        parsed = _json_prefix(tail.strip())
        items = parsed if isinstance(parsed, list) else [parsed]
        found = [c for c in (_as_call(i) for i in items) if c is not None]
        if parsed is None or len(found) != len(items):
            return text, []
        return head.rstrip(), found
    kept: list[str] = []
    pos = 0
    while True:
        i = text.find(start, pos)
        if i < 0:
            kept.append(text[pos:])
            break
        j = text.find(end, i + len(start))
        body = text[i + len(start) : j if j >= 0 else len(text)]
        call = _as_call(_json_prefix(body.strip()))
        if call is None:
            kept.append(text[pos : (j + len(end)) if j >= 0 else len(text)])
        else:
            kept.append(text[pos:i])
            calls.append(call)
        if j < 0:
            break
        pos = j + len(end)
    return "".join(kept).strip() if calls else text, calls


def _json_prefix(text: str) -> Any:
    try:
        value, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    return value


def _as_call(value: Any) -> ToolCall | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("name"), str):
        return None
    args = value.get("arguments", value.get("parameters", {}))
    arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return ToolCall(
        id="call_" + uuid.uuid4().hex[:24],
        type="function",
        function={"name": value["name"], "arguments": arguments},
    )


# -- requests --------------------------------------------------------------------------------------


_MIN_TEMPERATURE = 1e-3


def _number(value: Any, name: str, low: float, high: float | None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ModuleConfigError(f"{name}: expected a number, got {value!r}")
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f">= {low}"
        raise ModuleConfigError(f"{name}: expected a number {bounds}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class GenerationOptions:
    """How to generate: greedy unless ``temperature`` > 0; ``stop`` adds stop strings.

    A temperature below 0.001 is greedy decoding (dividing the logits by it
    would overflow); ``top_p`` is in (0, 1]; ``seed`` makes sampling repeatable.
    """

    max_new_tokens: int = _DEFAULT_MAX_NEW_TOKENS
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None

    @classmethod
    def from_kwargs(cls, options: Mapping[str, Any], default_max_new_tokens: int) -> GenerationOptions:
        """Read OpenAI-style options (``max_tokens`` is ``max_new_tokens``); unknown ones are an error."""
        opts = dict(options)
        max_new = opts.pop("max_new_tokens", None)
        alias = opts.pop("max_tokens", None)
        alias2 = opts.pop("max_completion_tokens", None)
        max_new = next((v for v in (max_new, alias, alias2) if v is not None), default_max_new_tokens)
        stop = opts.pop("stop", None)
        stops = (stop,) if isinstance(stop, str) else tuple(stop or ())
        known = {f: opts.pop(f) for f in ("temperature", "top_p", "top_k", "seed") if f in opts}
        if opts:
            raise ModuleConfigError(
                f"unknown generation option {sorted(opts)[0]!r}; TrainableModule takes max_new_tokens "
                "(or max_tokens), temperature, top_p, top_k, stop and seed"
            )
        if not isinstance(max_new, int) or isinstance(max_new, bool) or max_new < 1:
            raise ModuleConfigError(f"max_new_tokens: expected a positive int, got {max_new!r}")
        if not all(isinstance(s, str) and s for s in stops):
            raise ModuleConfigError("stop: expected a non-empty str or a list of them")
        temperature = _number(known.pop("temperature", 0.0), "temperature", 0.0, None)
        if temperature < _MIN_TEMPERATURE:
            temperature = 0.0  # dividing logits by a vanishing temperature overflows: it means greedy
        top_p = _number(known.pop("top_p", 1.0), "top_p", 0.0, 1.0)
        if top_p == 0:
            raise ModuleConfigError("top_p: expected a number in (0, 1], got 0")
        top_k = known.pop("top_k", None)
        if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0):
            raise ModuleConfigError(f"top_k: expected an int >= 0, got {top_k!r}")
        seed = known.pop("seed", None)
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ModuleConfigError(f"seed: expected an int, got {seed!r}")
        return cls(max_new, temperature, top_p, top_k, stops, seed)


@dataclass(frozen=True)
class LocalRequest:
    """Everything one generation needs, built before the model runs (inspect it with ``build_request``).

    ``dropped`` lists the messages ``trim="oldest"`` removed to fit the context.
    """

    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...] | None
    text: str
    spans: tuple[Span, ...]
    input_ids: tuple[int, ...]
    options: GenerationOptions
    dropped: tuple[Mapping[str, Any], ...] = ()


# -- the module -------------------------------------------------------------------------------------


@dataclass
class _Backend:
    """The loaded model, shared by every handle ``share()`` makes (start() fills it in)."""

    path: str
    model: Any = None
    tokenizer: Any = None
    model_format: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: Any = None
    cancel_all: threading.Event = field(default_factory=threading.Event)
    vocab: Any = None  # a _Vocab once the tokenizer is loaded
    stop_ids: list[int] | None = None
    stop_ids_with_model: bool = False
    batcher: Any = None  # a _Batcher when max_batch_size > 1


class TrainableModule(ModuleBase[LocalRequest]):
    """A local Hugging Face causal LM, loaded from a folder with ``local_files_only=True``.

    Arguments:
        path: the model folder (``config.json``, weights, tokenizer, chat template).
        model_format: a prompter ``ModelFormat`` or registry name; by default derived from
            the tokenizer's chat template (then looked up by the folder's name).
        max_context: the context in tokens; default the model's ``max_position_embeddings``.
        trim: ``None`` (too long raises :class:`~modules.errors.ContextLengthError`) or
            ``"oldest"`` (drop whole oldest turns, keeping tool calls with their results).
        on_trim: called with the dropped messages when trimming happened.
        max_new_tokens: the default answer length.
        name: the model id the server reports (default: the folder's name).
        dtype, device: where the weights live (``"float32"``, ``"cpu"`` by default).
        max_batch_size: above 1, greedy requests that arrive while the model is busy are
            run together in one ``generate`` call (left-padded), up to this many at once;
            1 (the default) runs them one after the other.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        model_format: Any = None,
        max_context: int | None = None,
        trim: str | None = None,
        on_trim: Callable[[list[Mapping[str, Any]]], None] | None = None,
        max_new_tokens: int = _DEFAULT_MAX_NEW_TOKENS,
        name: str | None = None,
        dtype: str = "float32",
        device: str = "cpu",
        max_batch_size: int = 1,
    ) -> None:
        if trim not in (None, "oldest"):
            raise ModuleConfigError(f"trim: expected None or 'oldest', got {trim!r}")
        if not isinstance(max_batch_size, int) or max_batch_size < 1:
            raise ModuleConfigError(f"max_batch_size: expected an int >= 1, got {max_batch_size!r}")
        if dtype not in ("float32", "float16", "bfloat16", "float64"):
            raise ModuleConfigError(f"dtype: expected float32, float16, bfloat16 or float64, got {dtype!r}")
        if max_context is not None and (not isinstance(max_context, int) or max_context < 2):
            raise ModuleConfigError(f"max_context: expected an int >= 2, got {max_context!r}")
        self._backend = _Backend(path=str(path))
        if max_batch_size > 1:
            self._backend.batcher = _Batcher(self, max_batch_size)
        self._format_arg = model_format
        self._max_context = max_context
        self.trim = trim
        self.on_trim = on_trim
        self.max_new_tokens = max_new_tokens
        self.name = name or Path(str(path)).name
        self.dtype = dtype
        self.device = device
        self.last_dropped: list[Mapping[str, Any]] = []
        """The messages the last call's ``trim="oldest"`` dropped (empty when none)."""

    def __repr__(self) -> str:
        state = "started" if self._backend.model is not None else "not started"
        return f"TrainableModule({self._backend.path!r}, {state})"

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(
        self, serve: bool = False, port: int = 0, host: str = "127.0.0.1", **server_options: Any
    ) -> TrainableModule:
        """Load the model (once) and, with ``serve=True``, start the OpenAI-compatible server.

        ``port=0`` picks a free port; :attr:`url` is then the base URL to give an
        OpenAI client. ``server_options`` go to :func:`modules.server.create_app`.
        """
        self._load_tokenizer()
        b = self._backend
        if b.model is None:
            try:
                import torch
                from transformers import AutoModelForCausalLM
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise ModuleConfigError(
                    "TrainableModule needs the 'local' extra: pip install 'prompter[local]'"
                ) from exc
            model = AutoModelForCausalLM.from_pretrained(
                b.path, local_files_only=True, dtype=getattr(torch, self.dtype)
            )
            b.model = model.to(self.device).eval()
            b.cancel_all.clear()
        if serve and b.server is None:
            from .server import ServerThread, create_app

            b.server = ServerThread(create_app(self, **server_options), host=host, port=port).start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server (streams in flight end with an error event) and unload the model."""
        b = self._backend
        b.cancel_all.set()
        if b.server is not None:
            b.server.stop(timeout)
            b.server = None
        with b.lock:
            b.model = None

    def __enter__(self) -> TrainableModule:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The server's OpenAI base URL (``http://127.0.0.1:PORT/v1``); needs ``start(serve=True)``."""
        if self._backend.server is None:
            raise ModelNotStartedError("no server: call start(serve=True) first")
        return str(self._backend.server.url) + "/v1"

    @property
    def tokenizer(self) -> Any:
        """The model's tokenizer (loaded on first use; the model itself waits for ``start()``)."""
        return self._load_tokenizer()

    @property
    def model_format(self) -> Any:
        """The prompter ``ModelFormat`` bound to this model, or None if none could be derived."""
        self._load_tokenizer()
        return self._backend.model_format

    @property
    def max_context(self) -> int:
        """The context length in tokens that prompt + answer must fit."""
        if self._max_context is not None:
            return self._max_context
        self._load_tokenizer()
        return int(self._backend.vocab.context)

    def _load_tokenizer(self) -> Any:
        b = self._backend
        if b.tokenizer is None:
            from transformers import AutoTokenizer

            if not Path(b.path).is_dir():
                raise ModuleConfigError(
                    f"{b.path!r} is not a folder: TrainableModule loads local model folders only "
                    "(local_files_only=True); download the model first, or build one with `prompter tiny-model`"
                )
            tokenizer = AutoTokenizer.from_pretrained(b.path, local_files_only=True)
            b.model_format = _bind_format(self._format_arg, tokenizer, self.name)
            b.vocab = _Vocab.of(b.path, tokenizer, b.model_format)
            b.tokenizer = tokenizer
        return b.tokenizer

    # -- building requests (pure: no model needed) ------------------------------------------------

    def _build_request(
        self,
        input: ModuleInput,
        history: Sequence[Any] | None,
        tools: Sequence[Mapping[str, Any]] | None,
        generation: dict[str, Any],
    ) -> LocalRequest:
        self._load_tokenizer()
        fmt = self._backend.model_format
        tool_list = [dict(t) for t in tools] if tools is not None else None
        if _accepts(self.prompter.generate_prompt, "model_format"):
            body = self.prompter.generate_prompt(input, history, tool_list, format="openai", model_format=fmt)
        else:  # a duck-typed prompter that knows no model formats
            body = self.prompter.generate_prompt(input, history, tool_list, format="openai")
        return self.prepare(body["messages"], body.get("tools"), **generation)

    def prepare(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> LocalRequest:
        """Render, tokenize safely and fit OpenAI *messages* to the context (the server's entry point)."""
        options = GenerationOptions.from_kwargs(generation, self.max_new_tokens)
        tokenizer = self._load_tokenizer()
        msgs = [dict(m) for m in messages]
        budget = self.max_context - options.max_new_tokens
        dropped: list[Mapping[str, Any]] = []
        while True:
            rendered = render_with_spans(msgs, tools, model_format=self._backend.model_format, tokenizer=tokenizer)
            ids = encode_with_spans(tokenizer, rendered.text, rendered.spans)
            if len(ids) <= budget:
                break
            if budget < 1:  # no trimming can help
                raise ContextLengthError(
                    len(ids), options.max_new_tokens, self.max_context, "max_new_tokens alone fills the context"
                )
            turn = _oldest_turn(msgs) if self.trim == "oldest" else None
            if turn is None:
                remedy = (
                    "even the latest turn alone does not fit"
                    if self.trim
                    else "shorten the input or history, lower max_new_tokens, or pass trim='oldest'"
                )
                raise ContextLengthError(len(ids), options.max_new_tokens, self.max_context, remedy)
            dropped += msgs[turn[0] : turn[1]]
            del msgs[turn[0] : turn[1]]
        self.last_dropped = dropped
        if dropped:
            logger.warning(
                "trim='oldest': dropped %d message(s) to fit %d tokens into a %d-token context",
                len(dropped),
                len(ids) + options.max_new_tokens,
                self.max_context,
            )
            if self.on_trim is not None:
                self.on_trim(list(dropped))
        return LocalRequest(
            messages=tuple(msgs),
            tools=tuple(tools) if tools else None,
            text=rendered.text,
            spans=rendered.spans,
            input_ids=tuple(ids),
            options=options,
            dropped=tuple(dropped),
        )

    def prepare_text(self, prompt: str, **generation: Any) -> LocalRequest:
        """A raw-text request (``/v1/completions``): the whole prompt is user text, no control tokens."""
        options = GenerationOptions.from_kwargs(generation, self.max_new_tokens)
        tokenizer = self._load_tokenizer()
        ids = encode_with_spans(tokenizer, prompt, [(0, len(prompt))])
        if not ids:  # an empty prompt starts a fresh document, as after GPT-2's <|endoftext|>
            first = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
            ids = [first] if first is not None else []
        if not ids:
            raise ModuleConfigError("prompt: empty, and the tokenizer has no bos or eos token to start from")
        if len(ids) + options.max_new_tokens > self.max_context:
            raise ContextLengthError(len(ids), options.max_new_tokens, self.max_context, "shorten the prompt")
        return LocalRequest((), None, prompt, ((0, len(prompt)),), tuple(ids), options)

    # -- generating ------------------------------------------------------------------------------

    def _complete(self, request: LocalRequest) -> Completion:
        return self.generate(request)

    def _stream(self, request: LocalRequest) -> Iterator[StreamDelta]:
        return self.generate_stream(request)

    def generate(self, request: LocalRequest, cancel: threading.Event | None = None) -> Completion:
        """Run one request to the end and return its :class:`~modules.base.Completion`."""
        ids, finish = self._run(request, cancel, None)
        text, finish = self._finish_text(self._decode(ids), request, finish)
        return self._completion(text, finish, request, len(ids))

    def generate_stream(
        self,
        request: LocalRequest,
        cancel: threading.Event | None = None,
        usage: dict[str, int] | None = None,
    ) -> Iterator[StreamDelta]:
        """Run one request in a thread and yield its text as it is generated.

        *usage*, if given, is filled with the token counts once the stream ends.

        Closing the iterator early (or setting *cancel*) stops the generation at
        the next token. A stop string never reaches the caller: text that could
        be the start of one is held back until it is decided.
        """
        from transformers import TextIteratorStreamer

        tokenizer = self._load_tokenizer()
        flag = cancel or threading.Event()
        stop_ids = set(self._stop_ids())

        class _Streamer(TextIteratorStreamer):  # drops stop tokens, so their text never shows
            def put(self, value: Any) -> None:
                if not self.next_tokens_are_prompt:
                    value = value.reshape(-1)
                    value = value[[int(v) not in stop_ids for v in value]]
                    if value.numel() == 0:
                        return
                super().put(value)

        streamer = _Streamer(tokenizer, skip_prompt=True, skip_special_tokens=False, timeout=None)
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["ids"], outcome["finish"] = self._run(request, flag, streamer)
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer below
                outcome["error"] = exc
                streamer.end()

        thread = threading.Thread(target=work, name="prompter-generate", daemon=True)
        thread.start()
        return self._stream_deltas(request, streamer, thread, flag, outcome, usage)

    def _stream_deltas(
        self,
        request: LocalRequest,
        streamer: Any,
        thread: threading.Thread,
        flag: threading.Event,
        outcome: dict[str, Any],
        usage: dict[str, int] | None,
    ) -> Iterator[StreamDelta]:
        stops = self._stop_strings(request)
        syntax = self._tool_syntax()
        # Hold back a tail that could still grow into a stop string or a tool-call marker.
        hold = max([len(s) for s in stops] + [len(syntax[0]) if syntax else 1]) - 1
        pending = ""
        sent = ""
        held_for_tools = hit_stop = False
        try:
            for piece in streamer:
                pending += piece
                cut = _first_stop(pending, stops)
                if cut is not None:
                    pending = pending[:cut]
                    hit_stop = True
                    flag.set()
                if syntax and (held_for_tools or syntax[0] in sent + pending):
                    held_for_tools = True
                    continue
                ready = pending if cut is not None else pending[: max(0, len(pending) - hold)]
                if ready:
                    sent += ready
                    pending = pending[len(ready) :]
                    yield StreamDelta(text=ready)
                if cut is not None:
                    break
            thread.join()
            if "error" in outcome:
                raise outcome["error"]
            if usage is not None:
                n_new = len(outcome.get("ids", ()))
                usage.update(
                    prompt_tokens=len(request.input_ids),
                    completion_tokens=n_new,
                    total_tokens=len(request.input_ids) + n_new,
                )
            finish = outcome.get("finish", "stop")
            if finish == "cancelled" and hit_stop:
                finish = "stop"  # we set the flag ourselves, on a stop string
            full, finish = self._finish_text(sent + pending, request, finish)
            calls: tuple[ToolCall, ...] = ()
            if syntax:
                full, found = parse_tool_calls(full, *syntax)
                calls = tuple(found)
            rest = full[len(sent) :] if full.startswith(sent) else ""
            if calls:
                finish = "tool_calls"
            yield StreamDelta(text=rest, tool_calls=calls, finish_reason=finish)
        finally:
            flag.set()

    def _run(self, request: LocalRequest, cancel: threading.Event | None, streamer: Any) -> tuple[list[int], str]:
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        b = self._backend
        opts = request.options
        if (
            b.batcher is not None
            and not (opts.temperature and opts.temperature > 0)
            and not self._stop_strings(request)
        ):
            outcome: tuple[list[int], str] = b.batcher.run(_Job(request, cancel, streamer))
            return outcome
        flags = [f for f in (cancel, b.cancel_all) if f is not None]

        class _Cancelled(StoppingCriteria):
            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                hit = any(f.is_set() for f in flags)
                return torch.full((input_ids.shape[0],), hit, dtype=torch.bool, device=input_ids.device)

        with b.lock:
            if b.model is None:
                if b.cancel_all.is_set():
                    raise ServerStoppedError("the model was stopped before this request ran")
                raise ModelNotStartedError(f"{self!r}: call start() before generating")
            if any(f.is_set() for f in flags):
                if b.cancel_all.is_set():
                    raise ServerStoppedError("the model was stopped before this request ran")
                return [], "cancelled"
            input_ids = torch.tensor([list(request.input_ids)], dtype=torch.long, device=b.model.device)
            kwargs: dict[str, Any] = {
                "max_new_tokens": opts.max_new_tokens,
                "eos_token_id": self._stop_ids() or None,
                "pad_token_id": b.tokenizer.pad_token_id
                if b.tokenizer.pad_token_id is not None
                else self._stop_ids()[0],
                "stopping_criteria": StoppingCriteriaList([_Cancelled()]),
                "attention_mask": torch.ones_like(input_ids),
                "streamer": streamer,
            }
            if opts.temperature and opts.temperature > 0:
                kwargs.update(do_sample=True, temperature=opts.temperature, top_p=opts.top_p, top_k=opts.top_k or 0)
                if opts.seed is not None:
                    torch.manual_seed(opts.seed % (1 << 63))  # OpenAI allows any int; torch wants 64 bits
            else:
                kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
            stops = self._stop_strings(request)
            if stops:
                kwargs.update(stop_strings=list(stops), tokenizer=b.tokenizer)
            with torch.inference_mode():
                out = b.model.generate(input_ids, **kwargs)
        new = [int(t) for t in out[0, input_ids.shape[1] :]]
        stop_ids = set(self._stop_ids())
        if new and new[-1] in stop_ids:
            return new[:-1], "stop"
        if b.cancel_all.is_set():
            raise ServerStoppedError("the model was stopped while generating")
        if cancel is not None and cancel.is_set():
            return new, "cancelled"
        return new, "length" if len(new) >= opts.max_new_tokens else "stop"

    def _decode(self, ids: list[int]) -> str:
        return str(self._backend.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))

    def _finish_text(self, text: str, request: LocalRequest, finish: str) -> tuple[str, str]:
        cut = _first_stop(text, self._stop_strings(request))
        if cut is not None:
            return text[:cut], "stop"
        return text, finish

    def _completion(self, text: str, finish: str, request: LocalRequest, n_new: int) -> Completion:
        calls: list[ToolCall] = []
        syntax = self._tool_syntax() if request.messages else None
        if syntax:
            text, calls = parse_tool_calls(text, *syntax)
        usage = {
            "prompt_tokens": len(request.input_ids),
            "completion_tokens": n_new,
            "total_tokens": len(request.input_ids) + n_new,
        }
        return Completion(
            text=text, tool_calls=tuple(calls), finish_reason="tool_calls" if calls else finish, usage=usage
        )

    # -- the format's stop words and tool syntax -------------------------------------------------

    def _stop_ids(self) -> list[int]:
        """Token ids generation stops at: the format's single-token stop words and the model's eos."""
        b = self._backend
        self._load_tokenizer()
        if b.stop_ids is None or (b.model is not None and not b.stop_ids_with_model):
            ids = list(b.vocab.stop_token_ids)
            eos = getattr(getattr(b.model, "generation_config", None), "eos_token_id", None)
            for tid in [eos] if isinstance(eos, int) else list(eos or []):
                if int(tid) not in ids:
                    ids.append(int(tid))
            b.stop_ids, b.stop_ids_with_model = ids, b.model is not None
        return b.stop_ids

    def _stop_strings(self, request: LocalRequest) -> tuple[str, ...]:
        """Stop words that are not single tokens (those stop as ids), plus the request's own."""
        self._load_tokenizer()
        return tuple(dict.fromkeys([*self._backend.vocab.text_stops, *request.options.stop]))

    def _tool_syntax(self) -> tuple[str, str | None] | None:
        self._load_tokenizer()
        syntax: tuple[str, str | None] | None = self._backend.vocab.tool_syntax
        return syntax


@dataclass(frozen=True)
class _Vocab:
    """What generation needs to know about the tokenizer, computed once per loaded model."""

    context: int
    stop_token_ids: tuple[int, ...]
    text_stops: tuple[str, ...]
    tool_syntax: tuple[str, str | None] | None

    @classmethod
    def of(cls, path: str, tokenizer: Any, fmt: Any) -> _Vocab:
        vocab = tokenizer.get_vocab()
        words = [w for w in (getattr(fmt, "stop_words", None) or ()) if isinstance(w, str) and w]
        eos = getattr(fmt, "eos_token", None) or tokenizer.eos_token
        if eos and eos not in words:
            words.append(eos)
        ids = tuple(dict.fromkeys(vocab[w] for w in words if w in vocab))
        text_stops = tuple(w for w in words if w not in vocab)
        return cls(_context_of(path, tokenizer), ids, text_stops, _tool_syntax_of(fmt, tokenizer, vocab))


def _context_of(path: str, tokenizer: Any) -> int:
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(path, local_files_only=True)
        positions = getattr(config, "max_position_embeddings", None)
    except (OSError, ValueError):  # a tokenizer-only folder
        positions = None
    return int(positions or min(tokenizer.model_max_length, 1 << 30))


def _tool_syntax_of(fmt: Any, tokenizer: Any, vocab: Mapping[str, int]) -> tuple[str, str | None] | None:
    start = getattr(fmt, "tool_call_start", None)
    if start:
        return start, getattr(fmt, "tool_call_end", None) or None
    template = getattr(tokenizer, "chat_template", None) or ""
    for s, e in _TOOL_SYNTAXES:
        if s in vocab or (s in template and (e is None or e in template)):
            return s, e
    return None


# -- batching concurrent requests ----------------------------------------------------------------


@dataclass
class _Job:
    """One greedy request waiting for (or inside) a batch."""

    request: LocalRequest
    cancel: threading.Event | None
    streamer: Any
    tokens: list[int] = field(default_factory=list)
    finished: bool = False
    outcome: tuple[list[int], str] | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()


class _Batcher:
    """Runs greedy requests that wait at the same time as one left-padded ``generate`` call.

    Callers block in :meth:`run`; one worker thread takes whatever is queued
    (up to ``max_batch`` jobs) each time the model is free, so a lone request
    starts at once and a crowd is served in batches. Each row stops on its own
    (its eos, its ``max_new_tokens``, its cancel flag); its tokens stream to its
    own streamer as they are generated.
    """

    def __init__(self, module: TrainableModule, max_batch: int) -> None:
        self.module = module
        self.max_batch = max_batch
        self.queue: list[_Job] = []
        self.cond = threading.Condition()
        self.worker: threading.Thread | None = None

    def run(self, job: _Job) -> tuple[list[int], str]:
        with self.cond:
            self.queue.append(job)
            if self.worker is None or not self.worker.is_alive():
                self.worker = threading.Thread(target=self._loop, name="prompter-batcher", daemon=True)
                self.worker.start()
            self.cond.notify()
        job.done.wait()
        if job.error is not None:
            raise job.error
        assert job.outcome is not None  # noqa: S101 - set together with done
        return job.outcome

    def _loop(self) -> None:
        while True:
            with self.cond:
                if not self.cond.wait_for(lambda: bool(self.queue), timeout=30):
                    self.worker = None  # idle: let the thread end; run() starts another
                    return
                jobs, self.queue = self.queue[: self.max_batch], self.queue[self.max_batch :]
            try:
                self._run_batch(jobs)
            except BaseException as exc:  # noqa: BLE001 - every waiting caller gets it
                for job in jobs:
                    if not job.done.is_set():
                        job.error = exc
                        if job.streamer is not None:
                            job.streamer.end()
                        job.done.set()

    def _run_batch(self, jobs: list[_Job]) -> None:
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList
        from transformers.generation.streamers import BaseStreamer

        module, b = self.module, self.module._backend
        stop_ids = set(module._stop_ids())
        with b.lock:
            if b.model is None:
                error: BaseException = (
                    ServerStoppedError("the model was stopped before this request ran")
                    if b.cancel_all.is_set()
                    else ModelNotStartedError(f"{module!r}: call start() before generating")
                )
                raise error
            live = []
            for job in jobs:
                if b.cancel_all.is_set():
                    raise ServerStoppedError("the model was stopped before this request ran")
                if job.cancelled():
                    self._finish(job, [], "cancelled")
                else:
                    live.append(job)
            if not live:
                return
            pad = b.tokenizer.pad_token_id if b.tokenizer.pad_token_id is not None else min(stop_ids)
            width = max(len(j.request.input_ids) for j in live)
            rows = [[pad] * (width - len(j.request.input_ids)) + list(j.request.input_ids) for j in live]
            mask = [[0] * (width - len(j.request.input_ids)) + [1] * len(j.request.input_ids) for j in live]
            input_ids = torch.tensor(rows, dtype=torch.long, device=b.model.device)
            attention_mask = torch.tensor(mask, dtype=torch.long, device=b.model.device)

            def settle(job: _Job) -> None:
                if not job.finished and (
                    (job.tokens and job.tokens[-1] in stop_ids)
                    or len(job.tokens) >= job.request.options.max_new_tokens
                    or job.cancelled()
                    or b.cancel_all.is_set()
                ):
                    job.finished = True

            class _Rows(StoppingCriteria):  # per row: its own length, cancel flag and eos
                def __call__(self, ids: Any, scores: Any, **kwargs: Any) -> Any:
                    for job in live:
                        settle(job)
                    return torch.tensor([job.finished for job in live], dtype=torch.bool, device=ids.device)

            class _Fanout(BaseStreamer):  # hands each row's new token to that row's caller
                def __init__(self) -> None:
                    self.prompt_seen = False

                def put(self, value: Any) -> None:
                    if not self.prompt_seen:
                        self.prompt_seen = True
                        return
                    for i, job in enumerate(live):
                        if job.finished:
                            continue
                        token = int(value.reshape(-1)[i])
                        job.tokens.append(token)
                        if job.streamer is not None:
                            job.streamer.put(torch.tensor([token]))

                def end(self) -> None:
                    pass

            for job in live:
                if job.streamer is not None:  # its first put is the prompt, which it skips
                    job.streamer.put(torch.tensor([list(job.request.input_ids)]))
            with torch.inference_mode():
                b.model.generate(
                    input_ids,
                    attention_mask=attention_mask,
                    max_new_tokens=max(j.request.options.max_new_tokens for j in live),
                    eos_token_id=sorted(stop_ids) or None,
                    pad_token_id=pad,
                    do_sample=False,
                    temperature=None,
                    top_p=None,
                    top_k=None,
                    stopping_criteria=StoppingCriteriaList([_Rows()]),
                    streamer=_Fanout(),
                )
        for job in live:
            tokens = job.tokens[: job.request.options.max_new_tokens]
            if tokens and tokens[-1] in stop_ids:
                self._finish(job, tokens[:-1], "stop")
            elif b.cancel_all.is_set():
                job.error = ServerStoppedError("the model was stopped while generating")
                self._finish(job, tokens, "cancelled")
            elif job.cancelled():
                self._finish(job, tokens, "cancelled")
            else:
                self._finish(job, tokens, "length" if len(tokens) >= job.request.options.max_new_tokens else "stop")

    @staticmethod
    def _finish(job: _Job, tokens: list[int], finish: str) -> None:
        job.outcome = (tokens, finish)
        if job.streamer is not None:
            job.streamer.end()
        job.done.set()


def _first_stop(text: str, stops: Sequence[str]) -> int | None:
    hits = [i for i in (text.find(s) for s in stops) if i >= 0]
    return min(hits) if hits else None


def _oldest_turn(messages: list[dict[str, Any]]) -> tuple[int, int] | None:
    """The [start, end) of the oldest whole turn that may be dropped, or None.

    A turn starts at a user message and runs to the next one, so an assistant's
    tool calls always leave together with their tool results. Leading system
    messages and the latest turn (the one being answered) are never dropped.
    """
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    first = next((i for i, m in enumerate(messages) if m.get("role") not in ("system", "developer")), None)
    if not users or first is None or first >= users[-1]:
        return None
    end = next(i for i in range(first + 1, len(messages)) if messages[i].get("role") == "user")
    return first, end


def _accepts(function: Callable[..., Any], name: str) -> bool:
    import inspect

    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _bind_format(arg: Any, tokenizer: Any, name: str) -> Any:
    """The prompter ModelFormat for this model: as given, from its chat template, or by name."""
    model_format_cls: Any
    try:
        from prompter.model_format import ModelFormat as model_format_cls
    except ImportError:  # a prompter without model formats: the tokenizer's own template renders
        model_format_cls = None
    if arg is not None and not isinstance(arg, str):
        return arg
    if model_format_cls is None:
        if isinstance(arg, str):
            raise ModuleConfigError(f"model_format={arg!r} needs prompter.model_format, which is not installed")
        return None
    if isinstance(arg, str):
        return model_format_cls.get(arg)
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, str) and template:
        try:
            return model_format_cls.from_chat_template(
                template, bos_token=tokenizer.bos_token, eos_token=tokenizer.eos_token, name=name
            )
        except Exception as exc:  # noqa: BLE001 - fall back to the tokenizer's own template below
            logger.warning("could not derive a ModelFormat from %s's chat template (%s); using the template", name, exc)
            return None
    try:
        return model_format_cls.get(name)
    except KeyError:
        return None
