"""Write the type stubs that let a type checker follow ``prompter.modules.X`` imports (``--check``: only compare).

``prompter/modules.py`` hands out the ``modules`` package under the name ``prompter.modules`` at run time
(see its docstring). A type checker does not run it: it reads ``prompter/modules/`` instead, a folder of
stubs, one per module of ``modules``, each re-exporting that module's names. Python itself never imports
that folder (it holds no ``__init__.py``, so ``prompter/modules.py`` wins). Run this after adding, renaming
or removing a module of ``modules``; ``tests/packaging`` fails until the stubs match.

    python scripts/facade_stubs.py           # write the stubs, remove stale ones
    python scripts/facade_stubs.py --check   # exit 1 and name the differences
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "modules"
STUBS = ROOT / "prompter" / "modules"
_MOVED = re.compile(r'"""Deprecated location; use ``(modules(?:\.\w+)+)``')
"""A module kept at an old location re-exports its new one: its stub names the new one (mypy 2.4 failed on the
chain of two star imports)."""

TOP = """\
# The names a type checker sees for the facade in prompter/modules.py, which loads them at run time.
# Written by scripts/facade_stubs.py, as is every stub in this folder.
from modules import *  # noqa: F403
from modules import __all__ as __all__
from modules import __version__ as __version__
from modules import testing as testing
"""


def expected() -> dict[Path, str]:
    """Each stub's path and text, for the modules of ``modules`` as they are now."""
    stubs = {STUBS / "__init__.pyi": TOP}
    for source in sorted(SOURCE.rglob("*.py")):
        relative = source.relative_to(SOURCE)
        if relative == Path("__init__.py") or "__pycache__" in relative.parts:
            continue
        parts = relative.with_suffix("").parts
        name = ".".join(["modules", *(parts[:-1] if parts[-1] == "__init__" else parts)])
        moved = _MOVED.match(source.read_text(encoding="utf-8"))  # a deprecated location: its new one's names
        stubs[STUBS / relative.with_suffix(".pyi")] = (
            f"# prompter.{name} at run time (scripts/facade_stubs.py)\n"
            f"from {moved.group(1) if moved else name} import *  # noqa: F403\n"
        )
    return stubs


def differences() -> list[str]:
    """What differs between the stubs on disk and :func:`expected` (empty when they match)."""
    want = expected()
    found = []
    for path, text in want.items():
        if not path.is_file():
            found.append(f"missing: {path.relative_to(ROOT)}")
        elif path.read_text(encoding="utf-8") != text:
            found.append(f"out of date: {path.relative_to(ROOT)}")
    found += [f"stale: {p.relative_to(ROOT)}" for p in sorted(STUBS.rglob("*.pyi")) if p not in want]
    return found


def write() -> None:
    want = expected()
    for stale in [p for p in STUBS.rglob("*.pyi") if p not in want]:
        stale.unlink()
    for path, text in want.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for folder in sorted((p for p in STUBS.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        found = differences()
        print("\n".join(found) or "the stubs match modules/")
        return 1 if found else 0
    if argv:
        print(__doc__)
        return 2
    write()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
