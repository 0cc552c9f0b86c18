"""A tiny-model cache folder that cannot be made or written is a typed error naming where it came from.

``PROMPTER_CACHE`` (or ``cache_dir=``) pointing under a file, or at a folder
without write access, ended ``prompter demo`` and ``cached_tiny_model()`` in a
raw ``NotADirectoryError``/``PermissionError`` traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from modules.errors import ModuleConfigError
from modules.local.tiny_model import cached_tiny_model


def test_a_cache_dir_under_a_file_names_cache_dir(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(ModuleConfigError, match=r"cache_dir.*point PROMPTER_CACHE \(or cache_dir=\)"):
        cached_tiny_model(cache_dir=str(blocker / "below"))


def test_a_prompter_cache_under_a_file_names_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("PROMPTER_CACHE", str(blocker))
    with pytest.raises(ModuleConfigError, match="PROMPTER_CACHE"):
        cached_tiny_model()


def test_a_cache_it_may_not_write_to_is_a_typed_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object, **kwargs: object) -> str:  # what a folder without write access answers (root
        raise PermissionError(13, "Permission denied")  # writes anywhere, so the refusal is simulated)

    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    with pytest.raises(ModuleConfigError, match=r"cannot write to the tiny-model cache .*Permission denied"):
        cached_tiny_model(family="qwen2.5", seed=987654, cache_dir=str(tmp_path))


def test_the_demo_says_it_in_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    env = {**os.environ, "PROMPTER_CACHE": str(blocker)}
    done = subprocess.run(
        [sys.executable, "-m", "modules.cli", "demo"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "PROMPTER_CACHE" in done.stderr
