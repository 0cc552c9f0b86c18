"""scripts/env.sh, which README's "On a fresh machine" runs, installs the CPU build of torch, as docs/install.md says."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _torch_install_command() -> str:
    script = (ROOT / "scripts" / "env.sh").read_text(encoding="utf-8").replace("\\\n", " ")
    (command,) = [line for line in script.splitlines() if re.search(r"pip install .*\"torch==", line)]
    return command


def test_env_script_takes_torch_from_the_cpu_index_not_the_default_one() -> None:
    # from the default index, torch (pinned or not) is the CUDA build on Linux: gigabytes a fresh machine
    # downloads for a project whose scripts, tests and demo run on the CPU
    command = _torch_install_command()
    assert "--index-url" in command and "download.pytorch.org/whl/cpu" in command, command


def test_env_script_takes_only_torch_from_the_cpu_index() -> None:
    # the rest resolves from the usual index: one look-up at PyTorch's index, not one per dependency
    assert "--no-deps" in _torch_install_command()


def test_install_page_says_the_clone_gets_the_cpu_build() -> None:
    page = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    assert "scripts/env.sh" in page and "CPU torch" in page
