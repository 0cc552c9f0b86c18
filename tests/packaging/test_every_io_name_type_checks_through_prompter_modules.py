"""A type checker sees every public I/O name through ``prompter.modules`` and ``modules``.

The package drops ``OnlineChatModule`` from ``__all__`` at run time when the 'online' extra
is missing, so that a star import takes the rest. mypy reads that ``__all__.remove`` as
always run: ``from prompter.modules import OnlineChatModule``, the import the docs teach,
was an ``attr-defined`` error in every project that type-checks, and the class was ``Any``.
"""

from __future__ import annotations

from pathlib import Path

import modules


def test_every_public_io_name_is_known_to_mypy_by_its_own_type(tmp_path: Path) -> None:
    from mypy import api

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
    out, err, status = api.run(
        [str(user), "--strict", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), "--follow-imports", "silent"]
    )
    assert status == 0, out + err
    assert "modules.online.module.OnlineChatModule" in out, out
