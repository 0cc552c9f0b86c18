"""The vLLM engine: prompter's token ids in, vLLM's tokens out, through ``AsyncLLM``.

``TrainableModule(path, engine="vllm")`` (or ``prompter serve --engine vllm``)
renders and tokenizes exactly as the transformers engine does, then hands the
ids to vLLM as a ``TokensPrompt``: vLLM never tokenizes text, so a user's
``<|im_start|>`` stays the plain text prompter made of it. The answer comes
back as token ids (``detokenize=False``); the module decodes, cuts at stop
strings, streams and parses tool calls as for any engine.

vLLM's ``AsyncLLM`` runs its own continuous batching (and tensor parallelism
with ``tensor_parallel_size``); this adapter runs its event loop in one thread
and lets each caller block on its own request. Per request:

* ``SamplingParams``: ``max_tokens``, ``temperature`` (0 is greedy), ``top_p``,
  ``top_k`` (0 for all), ``seed``, ``stop_token_ids`` (the format's stop ids),
  ``output_kind=DELTA`` (only new tokens each time), ``detokenize=False``;
* the cancel flag (a client that left, a stop string seen by the stream) and
  ``stop()`` abort the request in vLLM (``AsyncLLM.abort``).

Facts about vLLM's API come from its documentation and source (``vllm.AsyncLLM``
/ ``vllm.v1.engine.async_llm.AsyncLLM``, ``AsyncEngineArgs``, ``SamplingParams``,
``TokensPrompt``, ``RequestOutputKind``). On an H200 with vLLM 0.25.1 (2026-11-27)
the engine process started only once ``load`` set two defaults (below: a spawned
engine process, and PyTorch's sampler where FlashInfer is not installed); the
tiny float32 model then failed vLLM's own CUDA-graph capture (FlexAttention
asked for 16 GiB with 90% of the GPU given to the KV cache), which
``vllm_options`` (``gpu_memory_utilization``) is there for. The tests of
``tests/local/test_engine_vllm_gpu.py`` have not passed on a GPU yet.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import itertools
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

from modules.errors import MissingExtraError, ModuleConfigError, ServerStoppedError
from modules.local.engines import EngineUnavailableError
from modules.local.engines.admission import checked_request
from modules.local.streaming import open_stream, stream_ids

__all__ = ["RESERVED_OPTIONS", "VLLMEngine", "check_vllm", "check_vllm_options", "sampling_params_for", "vllm_seed"]

RESERVED_OPTIONS = {
    "model": "the model folder is TrainableModule's path",
    "tokenizer": "the tokenizer is read from the model folder",
    "dtype": "pass TrainableModule(dtype=...)",
    "tensor_parallel_size": "pass TrainableModule(tensor_parallel_size=...)",
}
"""vLLM engine arguments prompter sets itself, with where each comes from instead."""


def _gpu_count() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


def _has_vllm() -> bool:
    return importlib.util.find_spec("vllm") is not None


def check_vllm(tensor_parallel_size: int = 1) -> None:
    """Raise :class:`~modules.errors.MissingExtraError` without vLLM, or
    :class:`~modules.local.engines.EngineUnavailableError` without enough CUDA GPUs."""
    gpus = _gpu_count()
    if not _has_vllm():
        also = "" if gpus else "; it also needs a CUDA GPU, and none is visible here"
        raise MissingExtraError(
            "engine='vllm' needs vLLM, which is not installed: pip install 'prompter-kit[vllm]' "
            f"(Linux with a CUDA GPU){also}; or use engine='transformers' (the default)"
        )
    if gpus < tensor_parallel_size:
        seen = "no CUDA GPU is visible (torch.cuda.is_available() is False)" if not gpus else f"{gpus} CUDA GPU(s)"
        raise EngineUnavailableError(
            f"engine='vllm' with tensor_parallel_size={tensor_parallel_size} needs {tensor_parallel_size} CUDA "
            f"GPU(s); {seen}. Run on a GPU machine (check CUDA_VISIBLE_DEVICES and the driver), lower "
            "tensor_parallel_size, or use engine='transformers' (the default)"
        )


def vllm_seed(seed: int | None) -> int | None:
    """*seed* as vLLM takes it: as given within a signed 64-bit int (OpenAI's range); a larger Python int
    hashed into that range (:func:`~modules.local.engines.sampling.torch_seed`), so it neither fails
    inside vLLM nor folds onto another seed."""
    if seed is None or -(1 << 63) <= seed < (1 << 63):
        return seed
    from modules.local.engines.sampling import torch_seed

    return torch_seed(seed) >> 1


def sampling_params_for(job: Any, stop_ids: list[int], sampling_params: Any, output_kind: Any) -> Any:
    """vLLM ``SamplingParams`` for *job*'s options (classes passed in, so this runs without vLLM too)."""
    options = job.request.options
    return sampling_params(
        max_tokens=options.max_new_tokens,
        temperature=options.temperature,  # 0.0 is greedy in vLLM, as in prompter
        top_p=options.top_p,
        top_k=options.top_k or 0,  # 0: all tokens
        seed=vllm_seed(options.seed),
        stop_token_ids=list(stop_ids),
        detokenize=False,  # prompter decodes: one decoder, the same text for every engine
        skip_special_tokens=False,
        output_kind=output_kind,
    )


def check_vllm_options(options: Any) -> dict[str, Any]:
    """A copy of *options* (vLLM ``AsyncEngineArgs`` keywords) or a typed error naming the bad key.

    Which keys vLLM knows is checked when the engine starts (vLLM is imported then);
    here: a mapping of string keys, none of the arguments prompter sets itself.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ModuleConfigError(f"vllm_options: expected a dict of vLLM engine arguments, got {type(options).__name__}")
    for key in options:
        if not isinstance(key, str):
            raise ModuleConfigError(f"vllm_options: keys are vLLM engine argument names (str), got {key!r}")
        if key in RESERVED_OPTIONS:
            raise ModuleConfigError(f"vllm_options: {key!r} is set by prompter: {RESERVED_OPTIONS[key]}")
    return dict(options)


def _known_options(engine_args: Any, options: dict[str, Any]) -> None:
    """Refuse a key vLLM's ``AsyncEngineArgs`` (a dataclass) has no field for, naming it."""
    if not dataclasses.is_dataclass(engine_args):
        return
    fields = {f.name for f in dataclasses.fields(engine_args)}
    unknown = sorted(set(options) - fields)
    if unknown:
        raise ModuleConfigError(
            f"vllm_options: vLLM's AsyncEngineArgs has no argument {', '.join(map(repr, unknown))}; "
            "see `vllm serve --help` for the names (with _ for -), e.g. gpu_memory_utilization, max_num_seqs"
        )


class VLLMEngine:
    """An engine over a vLLM ``AsyncLLM`` (or any object with its ``generate`` / ``abort`` / ``shutdown``).

    Build it with :meth:`load` (imports vLLM, checks the GPUs, starts the
    engine) or, in tests, directly with a fake ``llm`` and the two vLLM
    classes it needs (``TokensPrompt``, ``SamplingParams``) plus ``DELTA``.
    """

    def __init__(
        self,
        llm: Any,
        stop_ids: Callable[[], list[int]],
        *,
        tokens_prompt: Any,
        sampling_params: Any,
        delta: Any,
        generation_config: Any = None,
    ) -> None:
        self.llm = llm
        self.stop_ids = stop_ids
        self.tokens_prompt = tokens_prompt
        self.sampling_params = sampling_params
        self.delta = delta
        self.generation_config = generation_config  # read by TrainableModule._stop_ids for the model's eos
        self.device = "cuda"
        self._ids = itertools.count()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="prompter-vllm", daemon=True)
        self._thread.start()
        self._stopping = threading.Event()

    @classmethod
    def load(
        cls,
        path: str,
        stop_ids: Callable[[], list[int]],
        *,
        dtype: str = "auto",
        tensor_parallel_size: int = 1,
        options: Mapping[str, Any] | None = None,
    ) -> VLLMEngine:
        """Start vLLM on the model folder *path* (weights and tokenizer read from it, nothing downloaded).

        *options* are further ``AsyncEngineArgs`` keywords (``gpu_memory_utilization``,
        ``max_num_seqs``, ``enforce_eager`` ...), checked against vLLM's own names.
        """
        extra = check_vllm_options(options)
        check_vllm(tensor_parallel_size)
        # vLLM forks its engine process unless told otherwise, and a fork cannot use CUDA once this
        # process has touched it (the GPU count above, a reference model): start it fresh instead.
        os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "spawn")
        if importlib.util.find_spec("flashinfer") is None:
            # vLLM's sampler imports FlashInfer unless told not to use it; without it, PyTorch's sampling.
            os.environ.setdefault("VLLM_USE_FLASHINFER_SAMPLER", "0")
        from transformers import GenerationConfig
        from vllm import SamplingParams, TokensPrompt  # type: ignore[import-not-found,unused-ignore]
        from vllm.engine.arg_utils import AsyncEngineArgs  # type: ignore[import-not-found,unused-ignore]
        from vllm.sampling_params import RequestOutputKind  # type: ignore[import-not-found,unused-ignore]
        from vllm.v1.engine.async_llm import AsyncLLM  # type: ignore[import-not-found,unused-ignore]

        _known_options(AsyncEngineArgs, extra)
        args = AsyncEngineArgs(
            model=path, tokenizer=path, dtype=dtype, tensor_parallel_size=tensor_parallel_size, **extra
        )
        llm = AsyncLLM.from_engine_args(args)
        try:
            generation_config = GenerationConfig.from_pretrained(path, local_files_only=True)
        except OSError:
            generation_config = None
        return cls(
            llm,
            stop_ids,
            tokens_prompt=TokensPrompt,
            sampling_params=SamplingParams,
            delta=RequestOutputKind.DELTA,
            generation_config=generation_config,
        )

    # -- the Engine interface ----------------------------------------------------------------------

    def run(self, job: Any) -> tuple[list[int], str]:
        """Generate for *job* in vLLM; block until it ends (its tokens stream to ``job.streamer`` meanwhile).

        A request of no ids or wrongly typed options raises :class:`~modules.errors.ModuleConfigError`
        here (vLLM itself refuses an id past its vocabulary)."""
        job.request = checked_request(job.request, None)
        if self._stopping.is_set() or self._loop.is_closed():
            raise ServerStoppedError("the model was stopped before this request ran")
        future = asyncio.run_coroutine_threadsafe(self._generate(job), self._loop)
        result: tuple[list[int], str] = future.result()
        return result

    def reopen(self) -> None:
        self._stopping.clear()

    def stop(self, timeout: float = 2.0) -> None:
        """Abort every request in flight (they raise ServerStoppedError), shut vLLM down, end the loop thread."""
        self._stopping.set()
        if self._loop.is_closed() or not self._thread.is_alive():
            return

        async def _tasks_done() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if tasks:
                await asyncio.wait(tasks, timeout=timeout)

        try:
            asyncio.run_coroutine_threadsafe(_tasks_done(), self._loop).result(timeout + 1)
        except (TimeoutError, RuntimeError):
            pass
        shutdown = getattr(self.llm, "shutdown", None)
        if shutdown is not None:
            shutdown()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self._loop.close()

    # -- one request -------------------------------------------------------------------------------

    async def _generate(self, job: Any) -> tuple[list[int], str]:
        stops = set(self.stop_ids())
        rid = f"prompter-{next(self._ids)}"
        params = sampling_params_for(job, sorted(stops), self.sampling_params, self.delta)
        prompt = self.tokens_prompt(prompt_token_ids=list(job.request.input_ids))
        if job.cancelled():
            self._end(job)
            return [], "cancelled"
        if job.streamer is not None:
            open_stream(job.streamer, job.request.input_ids)
        tokens: list[int] = []
        finish = "length"
        try:
            async for output in self.llm.generate(prompt=prompt, sampling_params=params, request_id=rid):
                new = [int(t) for t in output.outputs[0].token_ids]
                tokens += new
                for sink in (job.streamer, job.watch):
                    if sink is not None and new:
                        stream_ids(sink, new)
                if tokens and tokens[-1] in stops:
                    finish = "stop"
                    break
                if len(tokens) >= job.request.options.max_new_tokens:
                    finish = "length"
                    break
                if self._stopping.is_set():
                    await self.llm.abort(rid)
                    raise ServerStoppedError("the model was stopped while generating")
                if job.cancelled():
                    await self.llm.abort(rid)
                    finish = "cancelled"
                    break
                if output.finished:
                    finish = "length" if len(tokens) >= job.request.options.max_new_tokens else "stop"
                    break
        finally:
            self._end(job)
        if finish == "stop" and tokens and tokens[-1] in stops:
            tokens = tokens[:-1]
        return tokens[: job.request.options.max_new_tokens], finish

    @staticmethod
    def _end(job: Any) -> None:
        if job.streamer is not None:
            job.streamer.end()
