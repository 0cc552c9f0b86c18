"""An application with its own ``modules`` package still reaches ours through ``prompter.modules``.

Each case runs a fresh interpreter from a folder that holds the application's
``modules/`` package (first on ``sys.path``, as ``python app.py`` puts it), with
this checkout importable after it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_ONLINE_CALL = """
from prompter import ChatPrompter
from prompter.modules import OnlineChatModule, TrainableModule, ModuleError, __version__
from prompter.modules import testing
with testing.FakeOpenAIServer(replies=["Paris."]) as server:
    m = OnlineChatModule(base_url=server.base_url, model="fake").prompt(ChatPrompter(system="Be brief."))
    assert m("Capital of France?") == "Paris."
assert issubclass(ModuleError, Exception) and TrainableModule.__name__ == "TrainableModule"
assert __version__
"""


def _run(cwd: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """An application folder with its own ``modules`` package (a ``base`` submodule too, as ours has)."""
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "__init__.py").write_text("MINE = 'app'\n")
    (tmp_path / "modules" / "base.py").write_text("WHO = 'app base'\n")
    return tmp_path


def test_shadowed_modules_app_package_first_then_ours(app: Path) -> None:
    code = "import modules, modules.base\nassert modules.MINE == 'app'\n" + _ONLINE_CALL + textwrap.dedent("""
        import modules, modules.base
        assert modules.MINE == 'app' and modules.base.WHO == 'app base'  # the app's package is untouched
    """)
    done = _run(app, code)
    assert done.returncode == 0, done.stderr[-3000:]


def test_shadowed_modules_ours_first_then_the_app_package(app: Path) -> None:
    code = _ONLINE_CALL + "import modules, modules.base\nassert modules.MINE == 'app' and modules.base.WHO == 'app base'\n"
    done = _run(app, code)
    assert done.returncode == 0, done.stderr[-3000:]


def test_plain_modules_import_still_works_and_is_the_same_objects(tmp_path: Path) -> None:
    code = _ONLINE_CALL + textwrap.dedent("""
        import modules, prompter.modules
        assert modules.OnlineChatModule is prompter.modules.OnlineChatModule
        assert modules.__version__ == prompter.__version__
    """)
    done = _run(tmp_path, code)
    assert done.returncode == 0, done.stderr[-3000:]


def test_importing_prompter_does_not_load_the_io_package(app: Path) -> None:
    done = _run(app, "import sys, prompter\nprint(sorted(n for n in sys.modules if 'modules' in n))")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]"


def test_importing_prompter_modules_loads_nothing_until_a_name_is_asked_for(app: Path) -> None:
    code = "import sys, prompter.modules\nprint(sorted(n for n in sys.modules if n.startswith(('modules', 'prompter._modules'))))"
    done = _run(app, code)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]"


def test_every_file_of_ours_loads_under_the_private_name_beside_an_app_package(app: Path) -> None:
    # a construct the renaming loader does not cover would fail here, not in a user's project
    code = textwrap.dedent(f"""
        import importlib, sys, warnings
        from pathlib import Path
        import prompter.modules
        prompter.modules.ModuleBase  # the app's `modules` holds the name: the private copy loads
        root = Path({str(ROOT / "modules")!r})
        warnings.simplefilter("ignore", DeprecationWarning)  # the deprecated aliases say so on import
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(("prompter._modules", *(parts[:-1] if parts[-1] == "__init__" else parts)))
            importlib.import_module(name)
        leaked = sorted(n for n in sys.modules if n.startswith("modules."))
        assert not leaked, leaked
        import modules
        assert modules.MINE == "app"
        print(len([n for n in sys.modules if n.startswith("prompter._modules")]))
    """)
    done = _run(app, code)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout) >= 20


def test_the_renaming_covers_every_import_form() -> None:
    import ast

    from prompter.modules import _Rename

    source = textwrap.dedent("""
        import modules
        import modules.base
        import modules.online.module as online, json
        from modules.errors import ModuleError
        from modules import base
        from .sibling import thing
        TABLE = {"X": "modules.local.trainable", "text": "modules are great"}
    """)
    tree = _Rename().visit(ast.parse(source))
    assert ast.unparse(ast.fix_missing_locations(tree)).splitlines() == [
        "import prompter._modules as _prompter_private_import",
        "from prompter import _modules as modules",
        "import prompter._modules.base as _prompter_private_import",
        "from prompter import _modules as modules",
        "import prompter._modules.online.module as online",
        "import json",
        "from prompter._modules.errors import ModuleError",
        "from prompter._modules import base",
        "from .sibling import thing",
        "TABLE = {'X': 'prompter._modules.local.trainable', 'text': 'modules are great'}",
    ]


def test_the_tiny_model_helper_is_reached_beside_an_apps_own_modules_package(app: Path) -> None:
    """docs/getting-started.md builds its local model with ``cached_tiny_model``: a deep import of
    ``modules.local.tiny_model`` finds the app's package there, ``prompter.modules`` finds ours."""
    code = """
        import modules
        from prompter.modules import TrainableModule, build_tiny_model, cached_tiny_model
        assert modules.MINE == 'app'
        assert cached_tiny_model.__name__ == 'cached_tiny_model' and callable(build_tiny_model)
        assert TrainableModule.__name__ == 'TrainableModule'
    """
    done = _run(app, code)
    assert done.returncode == 0, done.stderr[-3000:]
