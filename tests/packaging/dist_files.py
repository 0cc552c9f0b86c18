"""Build the wheel and sdist from this checkout, offline, and list what they must carry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["ROOT", "build_sdist", "build_wheel", "required_data_files"]


def required_data_files() -> list[str]:
    """Every non-Python file the packages read at run time, as paths inside the wheel."""
    files = ["prompter/py.typed", "modules/py.typed"]
    files += [f"prompter/formats/chat_templates/{p.name}" for p in (ROOT / "prompter/formats/chat_templates").iterdir()]
    files += [f"modules/local/data/{p.name}" for p in (ROOT / "modules/local/data").iterdir()]
    return sorted(files)


def build_wheel(out: Path) -> Path:
    """``pip wheel`` with the installed setuptools (no build isolation: no download)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(out),
         str(ROOT)],
        check=True, capture_output=True, text=True,
    )
    (wheel,) = out.glob("*.whl")
    return wheel


def build_sdist(out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(out), str(ROOT)],
        check=True, capture_output=True, text=True,
    )
    (sdist,) = out.glob("*.tar.gz")
    return sdist
