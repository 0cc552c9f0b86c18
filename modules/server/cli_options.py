"""``prompter serve`` options for the engine: ``--engine``, ``--max-batch-size``, ``--tensor-parallel-size``,
``--torch-threads``, ``--engine-process``, ``--prefix-cache``; and the server's ``--allowed-host``
(:func:`add_allowed_host_option`, :func:`server_options`).

``--torch-threads`` defaults to one less than the CPU count: PyTorch's intra-op
threads otherwise take every core, and the HTTP event loop (parsing requests,
writing answers) then waits behind them. Measured 2026-11-23 on 2 cores shared
with other work, tiny model, 16 new tokens, 64 clients in another process
(``--max-batch-size 64``): 152 requests/s with 2 threads, 183 with 1; one
client about the same (29-31 requests/s). The gain is modest and noisy here;
the default matters most when other processes also load the cores.
"""

from __future__ import annotations

import argparse
from typing import Any

from modules.errors import ModuleConfigError
from modules.local.engines import DTYPES, check_torch_threads, default_torch_threads

__all__ = [
    "ALLOWED_HOST_HELP",
    "add_allowed_host_option",
    "add_engine_options",
    "apply_torch_threads",
    "default_torch_threads",
    "engine_options",
    "server_options",
    "vllm_options",
]


ALLOWED_HOST_HELP = (
    "a Host name (or address) clients may reach the server by, besides localhost, 127.x and [::1] (repeatable; "
    "'*' for any). Without it, a server on a loopback address refuses every other Host (a page whose name is "
    "pointed at 127.0.0.1, DNS rebinding), and one on 0.0.0.0 or a LAN address answers any"
)


def add_allowed_host_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--allowed-host NAME`` (repeatable) to *parser*: ``allowed_hosts``, see :mod:`modules.server.host_check`."""
    parser.add_argument("--allowed-host", action="append", default=None, metavar="NAME", help=ALLOWED_HOST_HELP)


def server_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``start(serve=True, ...)`` / ``create_app`` keywords ``--allowed-host`` gives (none when absent)."""
    hosts = getattr(args, "allowed_host", None)
    return {} if hosts is None else {"allowed_hosts": list(hosts)}


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """Add the engine options to the ``serve`` subcommand's *parser*, and the server's ``--allowed-host``."""
    add_allowed_host_option(parser)
    parser.add_argument("--engine", choices=("transformers", "vllm"), default="transformers", help="model runner")
    parser.add_argument(
        "--max-batch-size", type=int, default=64, help="requests decoded together (transformers; 1: one at a time)"
    )
    parser.add_argument(
        "--engine-process",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="decode in a separate process, free of the HTTP server's GIL (default: yes with --engine transformers)",
    )
    parser.add_argument(
        "--prefix-cache",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="reuse the keys and values of prompt openings seen before (transformers; --no-prefix-cache where "
        "clients must not learn from timing whether others sent the same opening)",
    )
    parser.add_argument("--tensor-parallel-size", type=int, default=1, help="GPUs to split the model across (vllm)")
    parser.add_argument(
        "--vllm-option",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a vLLM engine argument (repeatable; VALUE read as JSON, else as text), e.g. gpu_memory_utilization=0.5",
    )
    parser.add_argument(
        "--dtype",
        choices=DTYPES,
        default="float32",
        help="the weights' precision (both engines)",
    )
    parser.add_argument(
        "--device", default="cpu", help="where the transformers engine runs the model: cpu, cuda, cuda:1, mps ..."
    )
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=None,
        help=(
            "PyTorch intra-op threads of the engine (default: the usable CPUs - 1, leaving a core to the HTTP "
            "server; 1 for a model under 20M parameters in the engine process)"
        ),
    )


def vllm_options(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as vLLM engine arguments: VALUE read as JSON (0.5, true, 128), else kept as text."""
    import json

    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ModuleConfigError(
                f"--vllm-option: expected KEY=VALUE, got {pair!r} (e.g. gpu_memory_utilization=0.5)"
            )
        try:
            options[key.strip()] = json.loads(text)
        except ValueError:
            options[key.strip()] = text
    return options


def apply_torch_threads(args: argparse.Namespace) -> None:
    """Set PyTorch's intra-op threads from ``--torch-threads`` (or its default); call before loading the model."""
    threads = getattr(args, "torch_threads", None)
    check_torch_threads(threads, "--torch-threads")
    if threads is None:
        threads = default_torch_threads()
    import torch

    torch.set_num_threads(threads)


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The TrainableModule keywords those options give (absent ones, for other subcommands, are left out)."""
    names = (
        "engine", "max_batch_size", "tensor_parallel_size", "engine_process", "prefix_cache", "dtype", "device",
        "torch_threads",
    )  # fmt: skip
    options = {name: getattr(args, name) for name in names if hasattr(args, name)}
    if getattr(args, "vllm_option", None):
        options["vllm_options"] = vllm_options(args.vllm_option)
    if "engine_process" in options and options["engine_process"] is None:
        # The server's own threads would share the decode loop's GIL: batched or serialised, the loop
        # gets its own process (serialised over HTTP, 64 clients kept 33.9 requests/s of 31.3 alone with
        # it, and fell to 28.1 without; 2026-11-26, 2 cores, 64 tokens).
        from modules.local.engines.worker import ENGINE_PROCESS_SUPPORTED

        options["engine_process"] = options.get("engine", "transformers") == "transformers" and ENGINE_PROCESS_SUPPORTED
    return options
