"""Build the wheel and sdist from this checkout, offline, and list what they must carry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["ROOT", "build_dists", "required_data_files"]


def required_data_files() -> list[str]:
    """Every non-Python file the packages read at run time, as paths inside the wheel."""
    files = ["prompter/py.typed", "modules/py.typed"]
    files += [p.relative_to(ROOT).as_posix() for p in (ROOT / "prompter/modules").rglob("*.pyi")]  # the facade's stubs
    files += [f"prompter/formats/chat_templates/{p.name}" for p in (ROOT / "prompter/formats/chat_templates").iterdir()]
    files += [f"modules/local/data/{p.name}" for p in (ROOT / "modules/local/data").iterdir()]
    files += [f"modules/playground/static/{p.name}" for p in (ROOT / "modules/playground/static").iterdir()]
    return sorted(files)


def build_dists(out: Path) -> tuple[Path, Path]:
    """The sdist, then the wheel built from that sdist (as ``python -m build`` does), offline.

    Building the wheel from the sdist proves the sdist complete, and keeps a stale
    ``build/`` folder in the checkout (files since deleted) out of the wheel.
    No build isolation: the installed setuptools is used, nothing is downloaded.
    """
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "-o", str(out), str(ROOT)],
        check=True, capture_output=True, text=True,
    )
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel
