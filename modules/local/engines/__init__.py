"""Engines: what runs a prepared request's token ids on the model.

Everything before and after is shared by every engine: the prompter renders
the conversation, :mod:`modules.local.safe_tokens` tokenizes it (user text is
never control tokens), the module cuts the answer at stop strings, streams it
and parses tool calls, and the server serves it. An engine only turns a
:class:`~modules.local.batching.Job` (the prompt's ids, the options, a
cancel flag, an optional streamer) into the new token ids and a finish reason.
An engine that can take a job without waiting for it also has ``submit(job)``:
it returns at once and, when the job ends, sets its outcome (or error), then
``job.done``, then calls ``job.on_end(job)`` from the engine's own thread, which
is how ``TrainableModule.generate_async`` and the server await an answer
without a thread per request.

* ``"transformers"`` (the default): :class:`~modules.local.batching.Batcher`,
  continuous batching in one decode loop over a transformers model, on CPU or GPU.
* ``"vllm"``: :class:`~modules.local.engines.vllm.VLLMEngine`, vLLM's own
  engine (paged attention, continuous batching, tensor parallelism across GPUs),
  given token ids, never text. It needs vLLM and a CUDA GPU; without them
  :func:`check_engine` raises an error naming what is missing.
"""

from __future__ import annotations

import os
import re
from typing import Any, Protocol

from modules.errors import DOCS_URL, MissingExtraError, ModuleConfigError

__all__ = [
    "DTYPES",
    "ENGINES",
    "SMALL_MODEL_PARAMETERS",
    "Engine",
    "EngineUnavailableError",
    "check_device",
    "check_device_available",
    "check_engine",
    "check_torch_threads",
    "default_torch_threads",
    "usable_cpus",
]

ENGINES = ("transformers", "vllm")
DTYPES = ("float32", "float16", "bfloat16", "float64")
"""The weights' precisions a module takes (``dtype``, ``prompter serve --dtype``)."""


class EngineUnavailableError(ModuleConfigError, RuntimeError):
    """The engine asked for cannot run here (e.g. ``engine="vllm"`` without a CUDA GPU); the message says why."""


class Engine(Protocol):
    """What :class:`~modules.local.trainable.TrainableModule` asks of an engine."""

    def run(self, job: Any) -> tuple[list[int], str]:
        """Generate for *job* (a :class:`~modules.local.batching.Job`); block until it ends."""

    def reopen(self) -> None:
        """Accept work (again): called when the model is (re)loaded."""

    def stop(self, timeout: float = 2.0) -> None:
        """End generations in flight and release the engine's threads."""


def check_engine(engine: Any, tensor_parallel_size: Any = 1) -> None:
    """Raise a typed error for an unknown *engine*, a bad *tensor_parallel_size*, or an engine missing here."""
    if engine not in ENGINES:
        raise ModuleConfigError(f"engine: expected one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    if isinstance(tensor_parallel_size, bool) or not isinstance(tensor_parallel_size, int) or tensor_parallel_size < 1:
        raise ModuleConfigError(f"tensor_parallel_size: expected an int >= 1, got {tensor_parallel_size!r}")
    if engine == "transformers":
        if tensor_parallel_size != 1:
            raise ModuleConfigError(
                "tensor_parallel_size: the transformers engine runs on one device; pass engine='vllm' to split "
                "a model across GPUs"
            )
        return
    from modules.local.engines.vllm import check_vllm

    check_vllm(tensor_parallel_size)


_DEVICE = re.compile(r"(cpu|cuda|mps|xpu|npu|hpu|meta)(:\d+)?")


def check_device(device: Any) -> None:
    """Refuse a *device* string torch would not take, naming the ones it does (checked before loading)."""
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise ModuleConfigError(f"device: expected 'cpu', 'cuda', 'cuda:N', 'mps' or 'xpu', got {device!r}")


def check_device_available(device: str) -> None:
    """Raise :class:`EngineUnavailableError` when *device* names an accelerator this torch cannot see
    (:class:`~modules.errors.MissingExtraError` when torch itself is not installed).

    The CPU needs no look inside torch: torch is only found, not imported, so that ``start()`` spawns
    an engine process before this process pays for torch's import (seconds, which the engine process
    would otherwise wait out for a core to import its own on).
    """
    import importlib.util

    missing = MissingExtraError(
        "TrainableModule needs the 'local' extra (torch is not installed): pip install 'prompter-kit[local]' "
        f"(install the torch build for your machine first: {DOCS_URL}/install.md)"
    )
    kind = device.split(":", 1)[0]
    if kind in ("cpu", "meta"):
        if importlib.util.find_spec("torch") is None:  # None too where sys.modules holds None for it
            raise missing
        return
    try:
        import torch
    except ImportError as exc:
        raise missing from exc

    if kind == "cuda" and not torch.cuda.is_available():
        raise EngineUnavailableError(
            f"device={device!r}: no CUDA GPU is visible (torch.cuda.is_available() is False: no GPU, no driver, "
            "or a CPU build of torch); use device='cpu', or install the CUDA build of torch on a GPU machine"
        )
    if kind == "cuda" and ":" in device and int(device.split(":", 1)[1]) >= torch.cuda.device_count():
        raise EngineUnavailableError(
            f"device={device!r}: only {torch.cuda.device_count()} CUDA GPU(s) are visible (numbered from 0)"
        )
    if kind == "mps" and not torch.backends.mps.is_available():
        raise EngineUnavailableError(f"device={device!r}: Apple's MPS is not available here; use device='cpu'")


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity set where the system has one (a container's or
    ``taskset``'s limit), else ``os.cpu_count()``."""
    getaffinity = getattr(os, "sched_getaffinity", None)
    if getaffinity is not None:
        try:
            return max(1, len(getaffinity(0)))
        except OSError:
            pass
    return os.cpu_count() or 1


SMALL_MODEL_PARAMETERS = 20_000_000
"""Below this many parameters a model decodes (and trains) on one PyTorch thread by default."""


def default_torch_threads(cpus: int | None = None, parameters: int | None = None) -> int:
    """PyTorch intra-op threads for a decode loop that shares the machine with its callers.

    One less than *cpus* (:func:`usable_cpus` by default), at least 1. The loop's own threads
    otherwise take every core, and the callers (an HTTP server, an application's threads) then run
    on a core the loop's threads spin on. Measured 2026-11-27, 2 cores, tiny model, 64 new tokens,
    64 threads of one application calling a module with ``max_batch_size=64``: with the engine
    process on the application's thread count (2), 13-15x one caller's throughput and a p95 4.2-5.2x
    one caller's; on 1 thread, 20-21x and 3.1-3.2x.

    A model of fewer than :data:`SMALL_MODEL_PARAMETERS` *parameters* gets 1 thread whatever the
    cores: its matrices are too small to split, and the extra threads only spin. On an otherwise idle
    2-core machine the tiny model's loop alone (64 rows in a closed loop, no server, no clients) had a
    p95 of 200 ms on two threads against 165 ms on one (2026-11-27).
    """
    if parameters is not None and parameters < SMALL_MODEL_PARAMETERS:
        return 1
    return max(1, (cpus if cpus is not None else usable_cpus()) - 1)


def check_torch_threads(threads: Any, name: str = "torch_threads") -> None:
    """Refuse a thread count that is not an int >= 1 (None, the default, is taken)."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ModuleConfigError(
            f"{name}: expected an int >= 1 (or None for the default: 1 for a small model, else the CPUs less one), "
            f"got {threads!r}"
        )
