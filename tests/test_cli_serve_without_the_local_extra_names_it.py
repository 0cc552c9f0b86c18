"""``prompter serve`` on an install with the 'server' extra but not the 'local' one names the extra to install.

It ended in a ``ModuleNotFoundError: torch`` traceback: the engine's thread set-up imported torch
before the load named the missing extra. Simulated in a fresh interpreter by hiding the package
(``sys.modules[name] = None`` makes its import fail as if it were not installed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import sys
sys.modules[{hidden!r}] = None
from modules.cli import main
sys.exit(main(["serve", "--model", {folder!r}, "--port", "0", *{options!r}]))
"""


@pytest.mark.parametrize("hidden", ["torch", "transformers", "tokenizers"])
@pytest.mark.parametrize(
    "options", [[], ["--torch-threads", "1"], ["--no-engine-process"]], ids=["defaults", "threads", "in-process"]
)
def test_serve_without_the_local_extra_is_one_line_naming_it(hidden: str, options: list[str], tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    code = SCRIPT.format(hidden=hidden, folder=str(tmp_path), options=options)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.startswith("prompter serve: error: this command needs the 'local' extra ("), done.stderr
    assert "pip install 'prompter-kit[local]'" in done.stderr
