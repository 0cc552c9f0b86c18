"""``prompter eval CONFIG``: run an OpenCompass/AISBench-style evaluation config.

CONFIG is a ``.json`` file, or a ``.py`` file written as OpenCompass configs are
(it is run as Python, like any config of yours, so only run files you trust). It
defines ``dataset`` (or a one-item ``datasets``) and ``model`` (or ``models``), and
may set ``output``, ``workers`` and ``compat``. Paths in it are relative to its folder.
"""

from __future__ import annotations

import argparse
import json
import runpy
from pathlib import Path
from typing import Any

from modules.errors import ModuleConfigError

__all__ = ["add_parser", "load_config", "run"]


def add_parser(sub: Any) -> None:
    """Add the ``eval`` subcommand to ``prompter``'s subparsers."""
    cmd = sub.add_parser(
        "eval",
        help="run an evaluation config (Gen/PPL over a dataset) into predictions JSONL",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    cmd.add_argument("config", help="a .py or .json config defining dataset and model")
    cmd.add_argument("--output", default=None, help="predictions JSONL (default: the config's, or ABBR.jsonl)")
    cmd.add_argument("--workers", type=int, default=None, help="worker processes (default: the config's, or 1)")
    cmd.add_argument("--compat", default=None, choices=["opencompass", "aisbench"], help="upstream's exact prompts")
    cmd.add_argument("--limit", type=int, default=None, help="only the first N samples")
    cmd.add_argument("--no-progress", action="store_true", help="no progress bar")


def load_config(path: str | Path) -> dict[str, Any]:
    """The variables of a ``.py`` config, or the object of a ``.json`` one."""
    file = Path(path)
    if not file.is_file():
        raise ModuleConfigError(f"config {str(file)!r}: no such file")
    if file.suffix == ".json":
        data = json.loads(file.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ModuleConfigError(f"config {str(file)!r}: expected a JSON object")
        return data
    if file.suffix == ".py":
        return {k: v for k, v in runpy.run_path(str(file)).items() if not k.startswith("__")}
    raise ModuleConfigError(f"config {str(file)!r}: expected a .py or .json file")


def run(args: argparse.Namespace) -> int:
    """Handle ``prompter eval``."""
    from modules.eval.runner import run_eval

    config = load_config(args.config)
    stats = run_eval(
        config,
        output=args.output,
        workers=args.workers,
        progress=not args.no_progress,
        compat=args.compat,
        limit=args.limit,
        base_dir=Path(args.config).resolve().parent,
    )
    print(f"{stats.output}: {stats.total} samples, {stats.resumed} resumed, {stats.answered} answered")
    return 0
