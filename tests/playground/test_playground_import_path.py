"""``from prompter.modules.playground import create_playground_app``: the playground by the documented
import path of the I/O side, as ``prompter.modules.OnlineChatModule`` is reached.

``prompter.modules`` is a facade module; its submodules must be the very modules of our ``modules``
package (one copy: the same functions and classes), also beside an application's own ``modules``
package. Each case runs a fresh interpreter, so nothing is imported before the line under test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(cwd: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_playground_imports_through_prompter_modules_as_the_same_module(tmp_path: Path) -> None:
    done = _run(tmp_path, """
        from prompter.modules.playground import create_playground_app
        from prompter.modules.playground.state import read_state
        import prompter.modules.server.lifecycle as lifecycle
        import modules.playground, modules.playground.state, modules.server.lifecycle
        assert create_playground_app is modules.playground.create_playground_app
        assert read_state is modules.playground.state.read_state
        assert lifecycle is modules.server.lifecycle
        assert lifecycle.__spec__.name == "modules.server.lifecycle"  # the module keeps its own spec
        from prompter.modules import playground, OnlineChatModule  # the names that worked still work
        assert playground is modules.playground and OnlineChatModule is modules.OnlineChatModule
    """)
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_missing_submodule_of_prompter_modules_is_pythons_module_not_found(tmp_path: Path) -> None:
    done = _run(tmp_path, """
        import importlib
        for name in ("prompter.modules.no_such_thing", "prompter.modules.playground.no_such_thing"):
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as exc:
                assert exc.name == name and str(exc) == f"No module named {name!r}", exc
            else:
                raise AssertionError(name)
    """)
    assert done.returncode == 0, done.stderr[-3000:]


def test_playground_imports_through_prompter_modules_beside_an_apps_modules_package(tmp_path: Path) -> None:
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "__init__.py").write_text("MINE = 'app'\n")
    done = _run(tmp_path, """
        import modules
        from prompter.modules.playground import create_playground_app
        from prompter.modules.playground.state import read_state
        import prompter._modules.playground.state as private
        assert read_state is private.read_state and create_playground_app.__module__ == "prompter._modules.playground.app"
        import modules as again
        assert again.MINE == "app" and not hasattr(again, "playground")  # the app's package is untouched
    """)
    assert done.returncode == 0, done.stderr[-3000:]
