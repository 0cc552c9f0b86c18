"""A type checker sees every public I/O name through ``prompter.modules`` and ``modules``.

The package drops ``OnlineChatModule`` from ``__all__`` at run time when the 'online' extra
is missing, so that a star import takes the rest. mypy reads that ``__all__.remove`` as
always run: ``from prompter.modules import OnlineChatModule``, the import the docs teach,
was an ``attr-defined`` error in every project that type-checks, and the class was ``Any``.
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import modules

ROOT = Path(__file__).resolve().parents[2]


def test_every_public_io_name_is_known_to_mypy_by_its_own_type(tmp_path: Path) -> None:
    names = ", ".join(modules.__all__)
    user = tmp_path / "user_code.py"
    user.write_text(
        f"from prompter.modules import {names}\n"
        f"from modules import {names}\n"
        "from prompter.modules import OnlineChatModule as Online, Response\n"
        "def ask(m: Online) -> Response:\n"
        "    return m.respond('hi')\n"
        "reveal_type(Online)\n",
        encoding="utf-8",
    )
    assert "modules.online.module.OnlineChatModule" in _strict_mypy(user, tmp_path)


def _strict_mypy(user: Path, tmp_path: Path) -> str:
    """mypy --strict's report on *user* (imported modules read, not reported on); fails the test on any error."""
    from mypy import api

    out, err, status = api.run(
        [str(user), "--strict", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), "--follow-imports", "silent"]
    )
    assert status == 0, out + err
    return out


def test_the_stubs_of_prompter_modules_match_the_modules_of_modules() -> None:
    differences = runpy.run_path(str(ROOT / "scripts" / "facade_stubs.py"))["differences"]
    assert differences() == [], "run: python scripts/facade_stubs.py"


def test_every_submodule_import_the_docs_teach_type_checks_through_prompter_modules(tmp_path: Path) -> None:
    """``from prompter.modules.online.sources import ...`` and ``import prompter.modules.server.lifecycle``
    (as docs/ and examples/ write them) were ``import-not-found`` errors under mypy: ``prompter.modules``
    was one stub file, with no submodules. Every module of ``modules`` is now a module of ``prompter.modules``
    to mypy too, with the same types."""
    taught = set()
    for page in [*(ROOT / "docs").rglob("*.md"), *(ROOT / "examples").rglob("*.py"), ROOT / "README.md"]:
        taught |= set(re.findall(r"^\s*(from prompter\.modules\.[\w.]+ import [\w, ]+)$", page.read_text("utf-8"), re.M))
    assert len(taught) >= 5, taught  # the docs do teach such imports
    every = []
    for stub in sorted((ROOT / "prompter" / "modules").rglob("*.pyi")):
        parts = stub.relative_to(ROOT).with_suffix("").parts
        every.append("import " + ".".join(parts[:-1] if stub.stem == "__init__" else parts))
    user = tmp_path / "user_code.py"
    user.write_text(
        "\n".join([*sorted(taught), *every])
        + "\nfrom prompter.modules.local.trainable import TrainableModule as Local\n"
        "def build(path: str) -> Local:\n"
        "    return Local(path, max_batch_size=2)\n"
        "reveal_type(Local)\n"
        "reveal_type(prompter.modules.server.lifecycle)\n",
        encoding="utf-8",
    )
    assert "modules.local.trainable.TrainableModule" in _strict_mypy(user, tmp_path)
