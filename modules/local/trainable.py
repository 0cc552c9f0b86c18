"""TrainableModule: a local transformers chat model behind the module interface.

::

    from modules import TrainableModule
    m = TrainableModule("path/to/hf-model").prompt("You are terse.").start()
    m("Why is the sky blue?")                     # greedy, stops at the format's stop words
    for piece in m.stream("Tell me a story"): ... # pieces as they are generated
    await m.acall("hi"); m.astream(...); m.arespond(...)  # the same, off the event loop
    m.start(serve=True); m.url                    # an OpenAI-compatible server, see modules.server.app
    m.stop()

One call, step by step (each step is a function of its own module, tested alone):

1. The attached prompter builds the messages of its conversation for the model's
   format, as it renders the model's text (no OpenAI API rule applies:
   :func:`~modules.local.request.prompt_messages`); the prompter itself is never changed.
2. :func:`~modules.local.safe_tokens.render_with_spans` renders them through the
   bound ``ModelFormat`` (the sandboxed, budgeted chat template, exactly as the
   prompter renders it: tools never vanish, a rejected or ignored system prompt is
   folded, every failure a typed ``PromptError``), together with the ``(start, end)``
   spans of every piece of user-supplied text (contents, names, tool arguments,
   tool results, the strings of tool definitions).
3. :func:`~modules.local.safe_tokens.encode_with_spans` tokenizes that string so that
   control tokens (``<|im_start|>``, ``[INST]``...) are parsed **only outside
   the spans**: a user who types ``<|im_end|><|im_start|>system`` gets those
   characters as plain text, never as the model's delimiters.
4. The prompt length is checked against the context (``max_context`` or the
   model's ``max_position_embeddings``): too long raises
   :class:`~modules.errors.ContextLengthError` naming the token counts, or,
   with ``trim="oldest"``, drops whole oldest turns and reports them
   (:func:`~modules.local.trimming.fit_to_context`).
5. ``model.generate`` runs (greedy unless ``temperature`` > 0), stopping at the
   format's stop words. Concurrent callers never mix: generation is
   serialised by a lock, or, with ``max_batch_size`` > 1, concurrent greedy
   requests run as one left-padded batch (:class:`~modules.local.batching.Batcher`).
   Tool-call syntax in the answer (Qwen/Hermes ``<tool_call>{json}</tool_call>``,
   Mistral ``[TOOL_CALLS]``...) becomes OpenAI-style tool calls
   (:func:`~modules.local.tool_calls.parse_tool_calls`).

Why this file is long: the module's lifecycle (load, bind the format, serve, stop)
and its one request path are one state machine; tokenization, batching, streaming, trimming
and tool-call parsing already live in their own files beside it.
"""

from __future__ import annotations

import copy
import functools
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from modules.base import ChatStream, Completion, ModuleBase, ModuleInput, StreamDelta, ToolCall
from modules.errors import (
    DOCS_URL,
    ContextLengthError,
    MissingExtraError,
    ModelNotStartedError,
    ModuleConfigError,
    missing_extra,
)
from modules.local.batching import PREFIX_TOKENS, Batcher, ended_future, new_job
from modules.local.engines import (
    DTYPES,
    check_device,
    check_device_available,
    check_engine,
    check_torch_threads,
)
from modules.local.engines.worker import ENGINE_PROCESS_SUPPORTED
from modules.local.request import (
    DEFAULT_MAX_NEW_TOKENS,
    LOCAL_OPTIONS,
    GenerationOptions,
    LocalRequest,
    prompt_messages,
)
from modules.local.safe_tokens import (
    Rendered,
    control_token_ids,
    encode_with_spans,
    inert_names,
    render_with_spans,
)
from modules.local.streaming import CancellingStream, cut_at_stop, stop_token_streamer, stream_deltas
from modules.local.tool_calls import parse_tool_calls, tool_names
from modules.local.trimming import fit_to_context
from modules.local.turns import TurnLock
from modules.local.vocab import Vocab
from modules.online.aio import AsyncCalls, AsyncChatStream, AsyncRunner

if TYPE_CHECKING:
    from modules.local.training.data import ExampleSet
    from modules.local.training.example import TrainingExample

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
T = TypeVar("T")


# -- the module -------------------------------------------------------------------------------------


@dataclass
class _Backend:
    """The loaded model, shared by every handle ``share()`` makes (start() fills it in)."""

    path: str
    model: Any = None
    tokenizer: Any = None
    model_format: Any = None
    lock: TurnLock = field(default_factory=TurnLock)  # serialises generation; passed at each token
    server: Any = None
    cancel_all: threading.Event = field(default_factory=threading.Event)
    vocab: Any = None  # a Vocab once the tokenizer is loaded
    stop_ids: list[int] | None = None
    stop_ids_with_model: bool = False
    batcher: Any = None  # the engine's loop: a Batcher (transformers) or a vLLM engine
    control: frozenset[int] | None = None  # the tokenizer's control ids (safe_tokens.control_token_ids)
    inert: Any = None  # safe_tokens.inert_names of the tokenizer, made once


class TrainableModule(AsyncCalls, ModuleBase[LocalRequest]):
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
        max_batch_size: how many requests decode together (continuous batching: a request
            joins the running batch between two steps, see :mod:`modules.local.batching`);
            1 (the default) runs them one at a time, taking turns every few tokens.
        engine: ``"transformers"`` (the default) or ``"vllm"`` (needs vLLM and a CUDA GPU,
            else a typed error at once; see :mod:`modules.local.engines`).
        tensor_parallel_size: GPUs to split the model across (``engine="vllm"`` only).
        vllm_options: further vLLM engine arguments (``engine="vllm"`` only), e.g.
            ``{"gpu_memory_utilization": 0.5, "max_num_seqs": 128}``; names vLLM does not
            know are refused when the engine starts, and the ones prompter sets itself
            (``model``, ``dtype``, ``tensor_parallel_size`` ...) at once.
        engine_process: run the transformers engine's decode loop in its own process
            (:mod:`modules.local.engines.process`), so it never waits for the GIL of the
            server or of the calling threads. ``None`` (the default) means yes when
            ``max_batch_size`` > 1. The weights then load there; this process loads a
            copy only if ``score()`` or ``text_logprobs()`` needs them.
        prefix_cache: keep the keys and values of prompt openings the transformers engine
            prefilled, so a request that opens alike (the same system prompt) is prefilled
            from where it differs (:mod:`modules.local.engines.prefix_cache`; exact token
            ids, answers unchanged). Turn it off where one client must not learn, from how
            fast its request starts, whether another sent the same opening.
        torch_threads: PyTorch intra-op threads of the engine process (``None``, the default:
            1 for a model under 20M parameters, else the usable CPU count - 1, at least 1,
            leaving a core to the callers; see :func:`~modules.local.engines.default_torch_threads`).
            A loop in this process (``engine_process=False``) keeps this process's own setting.
        target_path, stream, return_trace: LazyLLM's forms, refused with the remedy: fine-tune with
            ``finetune(data, output_dir=...)``; streaming per call (``m.stream``); no trace.

    Every option is checked here: a wrong value is a :class:`~modules.errors.ModuleConfigError` at
    construction, never at the first call (nor, served, a 400 that blames the client).
    """

    generation_options: ClassVar[frozenset[str]] = LOCAL_OPTIONS  # an unknown keyword's error lists only these
    _cancel: threading.Event | None = None  # on the handle an acall/arespond runs on (see _for_task)

    def __init__(
        self,
        path: str | Path,
        target_path: str | Path | None = None,
        *,
        model_format: Any = None,
        max_context: int | None = None,
        trim: str | None = None,
        on_trim: Callable[[list[Mapping[str, Any]]], None] | None = None,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        name: str | None = None,
        dtype: str = "float32",
        device: str = "cpu",
        max_batch_size: int = 1,
        engine: str = "transformers",
        tensor_parallel_size: int = 1,
        engine_process: bool | None = None,
        prefix_cache: bool = True,
        vllm_options: Mapping[str, Any] | None = None,
        torch_threads: int | None = None,
        stream: bool = False,
        return_trace: bool = False,
    ) -> None:
        folder = os.fspath(path) if isinstance(path, os.PathLike) else path
        if not isinstance(folder, str):
            raise ModuleConfigError(
                f"path: expected a model folder or a Hugging Face model id (a str or a Path), got {_shown(path)}"
            )
        _refuse_lazyllm_forms(target_path, stream, return_trace)
        if trim not in (None, "oldest"):
            raise ModuleConfigError(f"trim: expected None or 'oldest', got {trim!r}")
        _check_plain_options(max_new_tokens, max_batch_size, name, on_trim)
        model_format = _checked_format(model_format)
        if dtype not in DTYPES:
            raise ModuleConfigError(f"dtype: expected float32, float16, bfloat16 or float64, got {dtype!r}")
        check_device(device)
        if max_context is not None and (not isinstance(max_context, int) or max_context < 2):
            raise ModuleConfigError(f"max_context: expected an int >= 2, got {max_context!r}")
        if type(prefix_cache) is not bool:
            raise ModuleConfigError(f"prefix_cache: expected True or False, got {prefix_cache!r}")
        self.prefix_tokens = PREFIX_TOKENS if prefix_cache else 0
        check_torch_threads(torch_threads)
        self.torch_threads = torch_threads
        if engine_process not in (None, True, False):
            raise ModuleConfigError(f"engine_process: expected None, True or False, got {engine_process!r}")
        if engine_process and engine != "transformers":
            raise ModuleConfigError("engine_process: only the transformers engine runs in an engine process")
        self._backend = _Backend(path=str(path))
        if vllm_options is not None and engine != "vllm":
            raise ModuleConfigError("vllm_options: only the vLLM engine reads them; pass engine='vllm'")
        from modules.local.engines.vllm import check_vllm_options

        self.vllm_options = check_vllm_options(vllm_options)
        check_engine(engine, tensor_parallel_size)
        self.engine, self.tensor_parallel_size = engine, tensor_parallel_size
        self.max_batch_size = max_batch_size
        if engine_process and not ENGINE_PROCESS_SUPPORTED:
            raise ModuleConfigError(
                "engine_process: the engine process needs a POSIX system (it inherits a socket); "
                "pass engine_process=False"
            )
        self.engine_process = engine == "transformers" and (
            max_batch_size > 1 and ENGINE_PROCESS_SUPPORTED if engine_process is None else engine_process
        )
        if self.engine_process:
            from modules.local.engines.process import ProcessEngine

            self._backend.batcher = ProcessEngine(self._backend.cancel_all)
        else:
            self._backend.batcher = (
                Batcher(self, max_batch_size, prefix_tokens=self.prefix_tokens) if engine == "transformers" else None
            )
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
        # acall/arespond/astream run m(...)/respond/stream on these threads, shared by share() handles;
        # generation itself is serialised (or batched), so a few more than a batch is plenty
        self._async = _ModelRunner(min(1024, max(8, 2 * max_batch_size)), self._backend)

    def __repr__(self) -> str:  # safe on a half-built one: a traceback showing locals reprs it
        backend = getattr(self, "_backend", None)
        if backend is None:
            return "TrainableModule(<not built>)"
        state = "started" if backend.model is not None else "not started"
        return f"TrainableModule({backend.path!r}, {state})"

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(
        self, serve: bool = False, port: int = 0, host: str = "127.0.0.1", **server_options: Any
    ) -> TrainableModule:
        """Load the model (once) and, with ``serve=True``, start the OpenAI-compatible server.

        ``port=0`` picks a free port; :attr:`url` is then the base URL to give an
        OpenAI client. ``server_options`` go to :func:`modules.server.create_app`
        and are checked before the model loads (a wrong one raises
        :class:`~modules.errors.ModuleConfigError`), as are ``host`` and ``port``; given
        without ``serve=True`` they are refused too. ``start(serve=True)`` while
        already serving raises :class:`~modules.errors.ModuleConfigError`: call
        ``stop()`` first. If anything fails inside ``start()``, the module is left
        stopped, as before the call.
        """
        b = self._backend
        if serve and b.server is not None:
            raise ModuleConfigError(f"already serving at {self.url}; call stop() first to serve again")
        if not serve and (server_options or port != 0 or host != "127.0.0.1"):  # a typo (serv=True) included
            given = [repr(n) for n in sorted(server_options)]
            given += ["port"] * (port != 0) + ["host"] * (host != "127.0.0.1")
            raise ModuleConfigError(
                f"start(): {', '.join(given)} given without serve=True, so no server would start: "
                "call start(serve=True, ...) to serve, or leave them out"
            )
        app = None
        if serve:
            try:
                import uvicorn  # noqa: F401 - said now, before the model loads, not when the server starts

                from modules.server.app import create_app
            except ModuleNotFoundError as exc:  # fastapi or uvicorn: the 'server' extra
                raise missing_extra(exc, "start(serve=True)") from None

            _check_address(host, port)
            _check_server_options(create_app, server_options)
            app = create_app(self, **server_options)  # validates values (max_concurrency...) before loading
        was_loaded = b.model is not None
        if not was_loaded and self.engine == "transformers":
            check_device_available(self.device)  # before an engine process or a load fails on it less clearly
        try:
            if not was_loaded and self.engine_process:
                b.batcher.spawn()  # it imports torch and transformers while this process loads
            self._load_tokenizer()
            if b.model is None and self.engine == "vllm":
                from modules.local.engines.vllm import VLLMEngine

                b.model = b.batcher = VLLMEngine.load(
                    b.path,
                    self._stop_ids,
                    dtype=self.dtype,
                    tensor_parallel_size=self.tensor_parallel_size,
                    options=self.vllm_options,
                )
                b.cancel_all.clear()
            if b.model is None and self.engine_process:
                from modules.local.engines.process import WeightsElsewhere

                b.model = WeightsElsewhere(b.path, self.dtype, self.device)  # the weights load over there
                b.cancel_all.clear()
                b.batcher.config = self._engine_config()
                b.batcher.reopen()
            if b.model is None:
                try:
                    import torch
                    from transformers import AutoModelForCausalLM
                except ImportError as exc:
                    raise MissingExtraError(
                        "TrainableModule needs the 'local' extra (torch or transformers is not installed): "
                        f"pip install 'prompter-kit[local]' (install torch first: {DOCS_URL}/install.md)"
                    ) from exc
                try:
                    model = AutoModelForCausalLM.from_pretrained(
                        b.path, local_files_only=True, dtype=getattr(torch, self.dtype)
                    )
                except (OSError, ValueError) as exc:
                    raise ModuleConfigError(
                        f"{b.path!r} is not a model folder transformers can load (config.json and weights): "
                        f"{_one_line(exc)}"
                    ) from exc
                b.model = model.to(self.device).eval()
                b.cancel_all.clear()
                if b.batcher is not None:
                    b.batcher.reopen()
            if app is not None:
                from modules.server.app import ServerThread

                b.server = ServerThread(app, host=host, port=port).start()
                app = None
        except BaseException:
            if app is not None:
                state = getattr(getattr(app, "state", None), "prompter", None)
                if state is not None:
                    state.close()
            if not was_loaded:
                with b.lock:
                    b.model = None
                if self.engine_process:
                    b.batcher.stop()
            raise
        return self

    def _engine_config(self) -> Any:
        from modules.local.engines.worker import EngineConfig

        b = self._backend
        return EngineConfig(
            path=b.path, dtype=self.dtype, device=self.device, max_batch=self.max_batch_size,
            stop_ids=tuple(self._stop_ids()),
            torch_threads=self.torch_threads,
            prefix_tokens=self.prefix_tokens,
        )  # fmt: skip

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server (streams in flight end with an error event) and unload the model."""
        b = self._backend
        b.cancel_all.set()
        if b.server is not None:
            b.server.stop(timeout)
            b.server = None
        with b.lock:
            b.model = None
        if b.batcher is not None:
            b.batcher.stop(min(timeout, 2.0))
        self.close_async()  # the async workers end after the calls they run (now failing: no model)

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
            try:
                from transformers import AutoTokenizer
            except ImportError as exc:
                raise MissingExtraError(
                    "TrainableModule needs the 'local' extra (transformers is not installed): "
                    f"pip install 'prompter-kit[local]' (install torch first: {DOCS_URL}/install.md)"
                ) from exc

            if not b.path or not Path(b.path).is_dir():
                b.path = _from_hf_cache(b.path)
            try:
                tokenizer = AutoTokenizer.from_pretrained(b.path, local_files_only=True)
            except (OSError, ValueError) as exc:
                folder = Path(b.path)
                if not any((folder / f).is_file() for f in ("config.json", "tokenizer_config.json", "tokenizer.json")):
                    raise ModuleConfigError(
                        f"{b.path!r} is not a model folder: it has no config.json or tokenizer files (give a "
                        "Hugging Face model folder, or build one with `prompter tiny-model`)"
                    ) from exc
                raise ModuleConfigError(
                    f"{b.path!r} is not a model folder transformers can load (no usable tokenizer): {_one_line(exc)}"
                ) from exc
            b.model_format = _bind_format(self._format_arg, tokenizer, self.name)
            b.vocab = Vocab.of(b.path, tokenizer, b.model_format)
            b.control = control_token_ids(tokenizer)  # once: this module's tokenizer does not change
            b.inert = inert_names(tokenizer, b.control)
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
        tool_list: Any = tools  # not a list of dicts: the prompter refuses it by name (a ToolsError)
        if tools is not None and not isinstance(tools, (str, bytes, Mapping)) and isinstance(tools, Iterable):
            tool_list = [dict(t) if isinstance(t, Mapping) else t for t in tools]  # copies of the caller's dicts
        messages, listed = prompt_messages(self.prompter, input, history, tool_list, fmt)
        return self.prepare(messages, listed, **generation)

    def prepare(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> LocalRequest:
        """Render, tokenize safely and fit OpenAI *messages* to the context (the server's entry point).

        The prompt is what the bound ``ModelFormat`` renders (as ``prompter`` renders it):
        tools never vanish, a system prompt the template rejects or ignores is folded into
        the first user message; a malformed request raises a
        :class:`~prompter.errors.PromptError` (``MessageError``, ``ToolsError``, ``TemplateError``).
        """
        options = GenerationOptions.from_kwargs(generation, self.max_new_tokens)
        tokenizer = self._load_tokenizer()
        _checked_request(messages, tools)

        def encode(msgs: list[dict[str, Any]]) -> tuple[Rendered, list[int]]:
            b = self._backend
            rendered = render_with_spans(msgs, tools, model_format=b.model_format, tokenizer=tokenizer, inert=b.inert)
            return rendered, encode_with_spans(tokenizer, rendered.text, rendered.spans, control=b.control)

        fitted = fit_to_context(
            [dict(m) for m in messages],
            encode,
            max_new_tokens=options.max_new_tokens,
            max_context=self.max_context,
            trim=self.trim,
        )
        self.last_dropped = fitted.dropped
        if fitted.dropped:
            logger.warning(
                "trim='oldest': dropped %d message(s) to fit %d tokens into a %d-token context",
                len(fitted.dropped),
                len(fitted.ids) + options.max_new_tokens,
                self.max_context,
            )
            if self.on_trim is not None:
                self.on_trim(list(fitted.dropped))
        return LocalRequest(
            messages=tuple(fitted.messages),
            tools=tuple(tools) if tools else None,
            text=fitted.rendered.text,
            spans=fitted.rendered.spans,
            input_ids=tuple(fitted.ids),
            options=options,
            dropped=tuple(fitted.dropped),
        )

    def prepare_text(
        self,
        prompt: str,
        *,
        user_spans: Sequence[tuple[int, int]] | None = None,
        add_special_tokens: bool = False,
        **generation: Any,
    ) -> LocalRequest:
        """A raw-text request (``/v1/completions``): the whole prompt is user text, no control tokens.

        *user_spans* (``(start, end)`` character offsets, in order, not overlapping) say which
        parts are user text instead; the text outside them is markup the caller wrote, whose
        spelled-out control tokens (``<|im_start|>``) become the control tokens, as in a chat
        template. The evaluation gives the spans of a meta template's prompt this way
        (:func:`prompter.templates.markup.parse_with_spans`). *add_special_tokens* puts the ids the
        tokenizer adds to a text around it (a bos, where it adds one), as ``tokenizer(prompt)``
        does: OpenCompass's Hugging Face base models generate from those ids, and
        ``score(compat="opencompass")`` scores with them.
        """
        if not isinstance(prompt, str):
            raise ModuleConfigError(f"prompt: expected text (a str), got {type(prompt).__name__}")
        if type(add_special_tokens) is not bool:
            raise ModuleConfigError(f"add_special_tokens: expected True or False, got {_shown(add_special_tokens)}")
        prompt = str.__str__(prompt)  # the characters of a str subclass: its own methods are never run
        spans = [(0, len(prompt))] if user_spans is None else _checked_spans(user_spans, len(prompt))
        options = GenerationOptions.from_kwargs(generation, self.max_new_tokens)
        tokenizer = self._load_tokenizer()
        ids = encode_with_spans(tokenizer, prompt, spans, control=self._backend.control)
        if add_special_tokens:
            from modules.local.scoring import added_ids

            before, after = added_ids(tokenizer)
            ids = [*before, *ids, *after]
        if not ids:  # an empty prompt starts a fresh document, as after GPT-2's <|endoftext|>
            first = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
            ids = [first] if first is not None else []
        if not ids:
            raise ModuleConfigError("prompt: empty, and the tokenizer has no bos or eos token to start from")
        if len(ids) + options.max_new_tokens > self.max_context:
            raise ContextLengthError(len(ids), options.max_new_tokens, self.max_context, "shorten the prompt")
        return LocalRequest((), None, prompt, tuple(spans), tuple(ids), options)

    # -- training (thin: the work lives in modules/local/training/) ----------------------------------

    def training_example(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        label: str | Mapping[str, Any],
        train_on_history: bool = False,
        max_length: int | None = None,
    ) -> TrainingExample:
        """``input_ids``, ``attention_mask`` and ``labels`` to learn *label* as the answer to this call.

        *label* is the answer's text, or the answer as an assistant message (``{"role": "assistant",
        "content": ..., "tool_calls": [...]}``): a tool-call answer is learnt as the model's template
        writes it. The prompt ids are exactly the ids ``self(input, history, tools)`` would send; see
        :mod:`modules.local.training.example`.
        """
        from modules.local.training.example import build_training_example

        return build_training_example(
            self, self._stop_ids(), input, history, tools,
            label=label, train_on_history=train_on_history, max_length=max_length,
        )  # fmt: skip

    def training_examples(self, data: Any, **options: Any) -> ExampleSet:
        """Examples from a JSONL file, a list of records or a ``datasets.Dataset`` (see ``training.data``)."""
        from modules.local.training.data import build_examples

        return build_examples(self, data, **options)

    def finetune(self, data: Any, output_dir: str | Path, **options: Any) -> TrainableModule:
        """Fine-tune a copy of the model on *data*; return a started module on the saved folder, same prompter.

        Options (``epochs``, ``lr``, ``batch_size``, ``lora``...): :func:`modules.local.training.loop.train_folder`.
        """
        from modules.local.training.loop import train_folder

        self._load_tokenizer()  # resolves a Hugging Face cache name to its folder first
        folder = train_folder(self, self._backend.path, data, output_dir, **options)
        tuned = TrainableModule(
            folder, model_format=self.model_format, max_context=self._max_context, trim=self.trim,
            on_trim=self.on_trim, max_new_tokens=self.max_new_tokens, dtype=self.dtype, device=self.device,
        )  # fmt: skip
        return tuned.prompt(self.prompter).start()

    def score(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        batch_size: int = 8,
        compat: str | None = None,
        user_spans: Sequence[Sequence[tuple[int, int]] | None] | None = None,
        mask_empty_context: bool = False,
    ) -> list[float]:
        """Mean negative log-likelihood of each ``(context, continuation)``'s continuation (PPL evaluation).

        ``compat="opencompass"`` gives OpenCompass's ``get_ppl`` number instead (the evaluation's compat
        mode asks for it): :func:`~modules.local.scoring.opencompass_ppl`, where an empty context is a whole
        text scored unmasked, or, with *mask_empty_context*, a context masking the ids the tokenizer adds to
        an empty text (``normalizing_str``'s calls). See :mod:`modules.local.scoring`;
        generation and scoring take turns on the model. ``user_spans[i]`` says where pair *i*'s joined text
        ``context + continuation`` is user text, as :meth:`prepare_text`'s *user_spans* (None: all of it).
        """
        from modules.local.scoring import continuation_nll, opencompass_ppl

        if compat not in (None, "opencompass"):
            raise ModuleConfigError(f"compat: expected None or 'opencompass', got {_shown(compat)}")
        if type(mask_empty_context) is not bool or (mask_empty_context and compat is None):
            raise ModuleConfigError(
                f"mask_empty_context: expected True or False, and True only with compat='opencompass' (the default "
                f"mode scores an empty context's continuation after the bos), got {_shown(mask_empty_context)}"
            )
        score: Callable[..., list[float]] = continuation_nll
        if compat is not None:
            score = functools.partial(opencompass_ppl, mask_empty_context=mask_empty_context)
        if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence):
            raise ModuleConfigError(f"pairs: expected a list of (context, continuation) pairs, got {pairs!r:.80}")
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ModuleConfigError(f"pairs[{i}]: expected a (context, continuation) pair, got {pair!r:.80}")
        spans = None if user_spans is None else _pair_spans(user_spans, pairs)
        tokenizer = self._load_tokenizer()
        with self._backend.lock:
            return score(
                self._weights(), tokenizer, pairs, max_context=self.max_context, batch_size=batch_size, user_spans=spans
            )

    def text_logprobs(self, texts: Sequence[str], *, top: int = 0) -> list[dict[str, Any]]:
        """Each text's token log-probabilities as OpenAI's ``echo`` + ``logprobs`` gives them (the server's
        ``/v1/completions`` scoring; :func:`modules.local.scoring.text_logprobs`)."""
        from modules.local.scoring import text_logprobs

        tokenizer = self._load_tokenizer()
        # The lock is taken per text's forward pass: generation goes on between the texts.
        return text_logprobs(
            self._weights(), tokenizer, texts, max_context=self.max_context, top=top, lock=self._backend.lock
        )

    def _weights(self) -> Any:
        """The loaded model in this process (with an engine process, loaded here on first need)."""
        from modules.local.engines.process import WeightsElsewhere

        model = self._backend.model
        if model is None:
            raise ModelNotStartedError(f"{self!r}: call start() first")
        return model.load() if isinstance(model, WeightsElsewhere) else model

    # -- generating ------------------------------------------------------------------------------

    def _complete(self, request: LocalRequest) -> Completion:
        return self.generate(request, self._cancel)  # set on the handle of an acall/arespond (_for_task)

    # -- async calls: the sync calls on the module's workers, refused at once when it is stopped --------

    def astream(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> AsyncChatStream:
        """``async for piece in m.astream(...)``: ``m.stream(...)``, each step on the module's async workers.

        As ``m.stream(...)``, the request is built here, so a wrong argument (an unknown keyword, a
        malformed history) or a stopped module raises at the call, not at the first step.
        """
        request = self.build_request(input, history, tools, **generation)
        if self._backend.model is None:
            raise ModelNotStartedError(f"{self!r}: call start() before generating")
        return AsyncChatStream(self._async_runner(), lambda: ChatStream(self._stream(request)))

    def _for_task(self, cancelled: threading.Event) -> TrainableModule:
        """A handle on the same model whose generations stop at the next token once *cancelled* is set (the
        awaiting ``acall``/``arespond`` task was cancelled), as leaving an ``astream`` stops its own."""
        twin = copy.copy(self)
        twin._cancel = cancelled
        return twin

    def _check_async(
        self,
        input: ModuleInput,
        history: Sequence[Any] | None,
        tools: Sequence[Mapping[str, Any]] | None,
        generation: Mapping[str, Any],
    ) -> None:
        """The sync call's error for a call on a stopped module, raised here so no worker thread starts:
        a wrong argument's error first (the sync call builds its request before it needs the model),
        else :class:`~modules.errors.ModelNotStartedError`."""
        if self._backend.model is None:
            self.build_request(input, history, tools, **generation)
            raise ModelNotStartedError(f"{self!r}: call start() before generating")

    def _stream(self, request: LocalRequest) -> Iterator[StreamDelta]:
        return self.generate_stream(request)

    def generate(self, request: LocalRequest, cancel: threading.Event | None = None) -> Completion:
        """Run one request to the end and return its :class:`~modules.base.Completion`."""
        ids, finish = self._run(request, cancel, None)
        return self._answer(ids, finish, request)

    async def generate_async(self, request: LocalRequest, cancel: threading.Event | None = None) -> Completion:
        """:meth:`generate` for an event loop, without a thread waiting for the model.

        The engine's own thread (the decode loop, or the engine process's reader) wakes
        this coroutine when the request ends: no thread per waiting request, no hand-off
        between threads for the answer. Cancelling the awaiting task cancels the generation
        (at the next token). An engine that cannot take a request without waiting (vLLM)
        runs :meth:`generate` in a worker thread instead.
        """
        import asyncio

        b = self._backend
        if b.model is None:  # never started, or stopped before this request began
            raise ModelNotStartedError(f"{self!r}: call start() before generating")
        submit = getattr(b.batcher, "submit", None)
        if submit is None:
            return await asyncio.get_running_loop().run_in_executor(None, self.generate, request, cancel)
        flag = cancel or threading.Event()
        job = new_job(self, request, flag, None)
        ended = ended_future(job)
        submit(job)
        try:
            await ended
        except asyncio.CancelledError:
            flag.set()  # nobody waits for the answer: free its row at the next token
            raise
        if job.error is not None:
            raise job.error
        assert job.outcome is not None  # noqa: S101 - set before on_end
        return self._answer(*job.outcome, request)

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
        tokenizer = self._load_tokenizer()
        if self._backend.model is None:
            raise ModelNotStartedError(f"{self!r}: call start() before generating")
        flag = cancel or threading.Event()
        streamer = stop_token_streamer(tokenizer, set(self._stop_ids()))
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

    def stream_batches(
        self, request: LocalRequest, cancel: threading.Event, usage: dict[str, int] | None = None
    ) -> AsyncIterator[list[StreamDelta]] | None:
        """:meth:`generate_stream` for an event loop (what the server streams with): an async iterator
        of lists of deltas, each what was settled since the last, with no thread per stream
        (:mod:`modules.local.stream_async`); None where the engine cannot take a request without
        waiting (vLLM) or the model is not loaded (use :meth:`generate_stream` there)."""
        b = self._backend
        submit = getattr(b.batcher, "submit", None)
        if submit is None or b.model is None:
            return None
        from modules.local.stream_async import stream_batches

        return stream_batches(self, submit, request, cancel, usage)

    def _stream_deltas(
        self,
        request: LocalRequest,
        streamer: Any,
        thread: threading.Thread,
        flag: threading.Event,
        outcome: dict[str, Any],
        usage: dict[str, int] | None,
    ) -> Iterator[StreamDelta]:
        """:func:`~modules.local.streaming.stream_deltas` with this model's stop strings and tool-call syntax."""
        stops, syntax = self._stop_strings(request), self._tool_syntax(request)
        return CancellingStream(stream_deltas(request, streamer, thread, flag, outcome, usage, stops, syntax), flag)

    def _run(self, request: LocalRequest, cancel: threading.Event | None, streamer: Any) -> tuple[list[int], str]:
        """Run *request* on the engine: the continuous-batching loop (:mod:`modules.local.batching`) or vLLM."""
        b = self._backend
        if b.model is None:  # never started, or stopped before this request began
            raise ModelNotStartedError(f"{self!r}: call start() before generating")
        outcome: tuple[list[int], str] = b.batcher.run(new_job(self, request, cancel, streamer))
        return outcome

    def _decode(self, ids: list[int]) -> str:
        return str(self._backend.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))

    def _answer(self, ids: list[int], finish: str, request: LocalRequest) -> Completion:
        """The :class:`~modules.base.Completion` of a generation's new ids: decoded, cut at a stop string."""
        text, finish = cut_at_stop(self._decode(ids), self._stop_strings(request), finish)
        return self._completion(text, finish, request, len(ids))

    def _completion(self, text: str, finish: str, request: LocalRequest, n_new: int) -> Completion:
        calls: list[ToolCall] = []
        syntax = self._tool_syntax(request)
        if syntax:
            text, calls = parse_tool_calls(text, *syntax, names=tool_names(request.tools))
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

    def _tool_syntax(self, request: LocalRequest) -> tuple[str, str | None] | None:
        """The markup the model writes tool calls in, where *request* offered tools; else None: as OpenAI's
        API, an answer to a request without tools (``tool_choice="none"``, a raw-text completion) has no
        tool calls, and text that looks like one stays text."""
        if not (request.messages and request.tools):
            return None
        self._load_tokenizer()
        syntax: tuple[str, str | None] | None = self._backend.vocab.tool_syntax
        return syntax


class _ModelRunner(AsyncRunner):
    """A TrainableModule's async workers: a job that ends with the model stopped (``stop()`` ran meanwhile)
    ends them again, as ``stop()`` did, so that no worker outlives the model."""

    def __init__(self, workers: int, backend: _Backend) -> None:
        super().__init__(workers)
        self._backend = backend

    async def job(self, function: Callable[[], T], cancelled: threading.Event | None = None) -> T:
        try:
            return await super().job(function, cancelled)
        finally:
            if self._backend.model is None:
                self.close()


def _from_hf_cache(name: str) -> str:
    """The local snapshot folder of a Hugging Face model id (``Qwen/Qwen2.5-0.5B-Instruct``), as LazyLLM's
    ``TrainableModule(name)`` takes it; never downloads (``local_files_only``).

    A *name* that reads as a path (``./m``, ``/m``, ``~/m``, ``a/b/c``, a Windows path; or, when it is not
    in the cache, one that exists as a file or whose parent folder exists) is refused as a folder that
    does not exist, with no download hint."""
    if not name.strip() or plainly_a_path(name):
        raise _no_folder(name)
    remedy = (
        f"{_NEVER}: download it first (`hf download {name}`; `huggingface-cli download` with an older "
        "huggingface_hub), give its folder, or build one with `prompter tiny-model PATH`"
    )
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError
    except ImportError as exc:  # pragma: no cover - huggingface_hub comes with transformers
        raise ModuleConfigError(f"{name!r} is not a folder; {remedy}") from exc
    try:
        return str(snapshot_download(repo_id=name, local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, OSError, ValueError) as exc:
        parent = Path(name).parent
        if Path(name).exists() or (parent != Path(".") and parent.is_dir()):
            raise _no_folder(name) from exc
        if isinstance(exc, HFValidationError):
            raise ModuleConfigError(
                f"{name!r} is not a folder nor a Hugging Face model id (ORG/NAME); {_NEVER}: give the folder "
                "of a model, or build one with `prompter tiny-model PATH`"
            ) from exc
        raise ModuleConfigError(f"{name!r} is not a folder nor in the local Hugging Face cache; {remedy}") from exc


def plainly_a_path(name: str) -> bool:
    """Whether *name* reads as a file-system path, never as a Hugging Face model id (``ORG/NAME``)."""
    return name.startswith((".", "/", "~")) or name.count("/") > 1 or "\\" in name or ":" in name


_NEVER = (
    "TrainableModule loads local model folders and models already in the local Hugging Face cache, and never downloads"
)


def missing_folder(path: str) -> ModuleConfigError | None:
    """The error ``TrainableModule(path)`` raises for a path with no folder there (one that reads as a path,
    or names a file), found without loading anything; None when *path* may load (a folder, or a model id)."""
    if Path(path).is_dir():
        return None
    return _no_folder(path) if not path.strip() or plainly_a_path(path) or Path(path).is_file() else None


def _no_folder(path: str) -> ModuleConfigError:
    """The error for *path* read as a file-system path: it names what is there instead of a folder."""
    where = Path(path).expanduser()
    what = (
        "no path given" if not path.strip()
        else "a file" if where.is_file()
        else "~ is not expanded here" if where.is_dir()
        else "it does not exist"
    )
    return ModuleConfigError(
        f"{path!r} is not a folder ({what}); {_NEVER}: give the folder of a model (with its config.json), "
        "or build one with `prompter tiny-model PATH`"
    )


def _refuse_lazyllm_forms(target_path: object, stream: object, return_trace: object) -> None:
    """A ``ModuleConfigError`` naming prompter's form for LazyLLM's constructor forms it does not take."""
    if target_path is not None:  # LazyLLM's TrainableModule(base_model, target_path)
        raise ModuleConfigError(
            "target_path (LazyLLM's second argument, where fine-tuned weights go): TrainableModule takes one "
            "path, the model to load; fine-tune with m.finetune(data, output_dir=...), which returns a module "
            "on the saved folder"
        )
    if stream is not False:
        raise ModuleConfigError(
            "stream=...: this module streams per call — use m.stream(input) (or m.astream) for pieces; "
            "m(input) returns the whole answer"
        )
    if return_trace is not False:
        raise ModuleConfigError(
            "return_trace: not supported (there is no trace); leave it out — build_request(input) shows what is sent"
        )


def _check_plain_options(max_new_tokens: object, max_batch_size: object, name: object, on_trim: object) -> None:
    """Typed errors at construction for options that would otherwise fail at the first call (or, served,
    come back to a client as its own mistake)."""
    if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) or max_new_tokens < 1:
        raise ModuleConfigError(
            f"max_new_tokens: expected an int >= 1 (the default answer length in tokens), got {_shown(max_new_tokens)}"
        )
    if not isinstance(max_batch_size, int) or isinstance(max_batch_size, bool) or max_batch_size < 1:
        raise ModuleConfigError(f"max_batch_size: expected an int >= 1, got {_shown(max_batch_size)}")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ModuleConfigError(
            f"name: expected a non-empty str (the model id the server reports) or None for the folder's name, "
            f"got {_shown(name)}"
        )
    if on_trim is not None and not callable(on_trim):
        raise ModuleConfigError(
            f"on_trim: expected a function called with the dropped messages, or None, got {_shown(on_trim)}"
        )


def _checked_format(model_format: object) -> Any:
    """``model_format`` as the module binds it: None, a ``ModelFormat``, or a registry name, looked up now (an
    unknown name raises ``UnknownModelFormatError`` listing close matches)."""
    from prompter.formats.model_format import ModelFormat

    if model_format is None or isinstance(model_format, ModelFormat):
        return model_format
    if isinstance(model_format, str):
        return ModelFormat.get(model_format)
    raise ModuleConfigError(
        f"model_format: expected a ModelFormat, a registry name ('qwen2.5') or None (the tokenizer's chat "
        f"template), got {_shown(model_format)}"
    )


def _shown(value: object) -> str:
    """*value* in an error: the repr of a str, number, bool or None (capped), else its type's name."""
    if value is None or isinstance(value, (str, int, float)):  # bool is an int
        shown = repr(value)
        return shown if len(shown) <= 80 else shown[:77] + "..."
    return type(value).__name__


def _one_line(exc: BaseException, limit: int = 300) -> str:
    """*exc*'s message on one line (transformers' span several), cut to *limit* characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _pair_spans(spans: object, pairs: Sequence[Any]) -> list[list[tuple[int, int]] | None]:
    """``user_spans`` of :meth:`TrainableModule.score`: one entry (spans or None) per pair, each checked."""
    if isinstance(spans, (str, bytes)) or not isinstance(spans, Sequence) or len(spans) != len(pairs):
        raise ModuleConfigError(
            f"user_spans: expected one entry (spans or None) for each of the {len(pairs)} pairs, got {spans!r:.80}"
        )
    checked: list[list[tuple[int, int]] | None] = []
    for pair, entry in zip(pairs, spans, strict=True):
        joined = sum(len(part) for part in pair if isinstance(part, str))
        checked.append(None if entry is None else _checked_spans(entry, joined))
    return checked


def _checked_spans(spans: object, length: int) -> list[tuple[int, int]]:
    """*spans* as ``(start, end)`` pairs of ints within a text of *length*, in order and apart, or a
    ModuleConfigError naming the first that is not."""
    if isinstance(spans, (str, bytes)) or not isinstance(spans, Sequence):
        raise ModuleConfigError(f"user_spans: expected a list of (start, end) pairs, got {type(spans).__name__}")
    checked: list[tuple[int, int]] = []
    for i, span in enumerate(spans):
        pair = tuple(span) if isinstance(span, (list, tuple)) else ()
        if len(pair) != 2 or not all(type(n) is int for n in pair):
            raise ModuleConfigError(f"user_spans[{i}]: expected a (start, end) pair of ints, got {span!r}")
        start, end = pair
        low = checked[-1][1] if checked else 0
        if not low <= start <= end <= length:
            raise ModuleConfigError(
                f"user_spans[{i}]: ({start}, {end}) must lie within the prompt's {length} characters, in order "
                "and not overlapping the span before it"
            )
        checked.append((start, end))
    return checked


def _check_address(host: object, port: object) -> None:
    """Raise ModuleConfigError for a *host* or *port* the server could not listen on (before anything loads)."""
    if not isinstance(host, str) or not host.strip():
        raise ModuleConfigError(
            f"host: expected the interface to listen on, a non-empty str ('127.0.0.1', or '0.0.0.0' for "
            f"every interface), got {host!r}"
        )
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ModuleConfigError(f"port: expected an int from 0 to 65535 (0 picks a free port), got {port!r}")


def _check_server_options(create_app: Callable[..., Any], options: Mapping[str, Any]) -> None:
    """Raise ModuleConfigError for an option :func:`~modules.server.create_app` does not take."""
    import inspect

    params = inspect.signature(create_app).parameters
    known = [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ModuleConfigError(
            f"start(): unknown server option(s) {', '.join(map(repr, unknown))}; known: {', '.join(known)}"
        )


def _bind_format(arg: Any, tokenizer: Any, name: str) -> Any:
    """The prompter ModelFormat for this model: as given, from its chat template, or by name.

    The module renders through this format (sandboxed, budgeted, the prompter's folding
    and tools policy), never through ``tokenizer.apply_chat_template``: a chat template
    the format cannot take is a :class:`~modules.errors.ModuleConfigError` here, at load.
    """
    from prompter.errors import PromptError
    from prompter.formats.model_format import ModelFormat

    if arg is not None and not isinstance(arg, str):
        return arg
    if isinstance(arg, str):
        return ModelFormat.get(arg)
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, (str, Mapping)) and template:
        try:
            return ModelFormat.from_chat_template(
                template if isinstance(template, str) else dict(template),
                bos_token=tokenizer.bos_token,
                eos_token=tokenizer.eos_token,
                name=name,
            )
        except PromptError as exc:
            raise ModuleConfigError(
                f"{name}: its chat template cannot run in prompter's sandbox ({_one_line(exc)}); "
                "pass model_format= (a ModelFormat or a registry name) to render this model"
            ) from None
    try:
        return ModelFormat.get(name)
    except KeyError:
        return None


def _checked_request(messages: Any, tools: Any) -> None:
    """Typed errors for a request whose shape cannot even be copied (the format checks the rest)."""
    from prompter.errors import MessageError, ToolsError

    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        raise MessageError(f"messages: expected a list of message dicts, got {type(messages).__name__}")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise MessageError(f"messages[{i}]: expected a message dict, got {type(message).__name__}")
    if tools is None:
        return
    if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
        raise ToolsError(f"tools: expected a list of tool dicts, got {type(tools).__name__}")
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise ToolsError(f"tools[{i}]: expected a tool dict (a JSON schema), got {type(tool).__name__}")
