"""``prompter serve`` options for the engine: ``--engine``, ``--max-batch-size``, ``--tensor-parallel-size``."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_engine_options", "engine_options"]


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """Add the engine options to the ``serve`` subcommand's *parser*."""
    parser.add_argument("--engine", choices=("transformers", "vllm"), default="transformers", help="model runner")
    parser.add_argument("--max-batch-size", type=int, default=1, help="requests decoded together (transformers)")
    parser.add_argument("--tensor-parallel-size", type=int, default=1, help="GPUs to split the model across (vllm)")


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The TrainableModule keywords those options give (absent ones, for other subcommands, are left out)."""
    names = ("engine", "max_batch_size", "tensor_parallel_size")
    return {name: getattr(args, name) for name in names if hasattr(args, name)}
