"""Every docs page and every example runs as written inside a project that has its own ``modules`` package.

docs/install.md promises that prompter works beside an application's own ``modules/``
folder, reached as ``prompter.modules``. A page or example that imports ``from modules ...``
(or ``import modules.x``) fails there (``No module named 'modules.testing'``), and a reader
copies those lines into exactly such a project. So no python block of README.md or docs/,
and no script of examples/, names the top-level ``modules`` package in an import; and
those that run offline in seconds run, from a folder whose ``modules`` package comes first
on ``sys.path``, as if installed (the editable finder removed), leaving that package the
application's (the new-user pages among them). The pages and examples that load a model are
run beside an app's package by wheel_job.py.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(["README.md", *(f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md"))])
EXAMPLES = sorted(f"examples/{script.name}" for script in (ROOT / "examples").glob("*.py"))
# run elsewhere: the pages and examples that load a model (tens of seconds each) by the wheel job
# (tests/packaging/wheel_job.py), from a folder with its own `modules` package; the README's blocks are
# shell and the quickstart, which the wheel job runs too
RUN_ELSEWHERE = {
    "README.md",
    "docs/getting-started.md",
    "docs/local-models.md",
    "docs/finetune.md",
    "examples/local_model.py",
    "examples/finetune_distributed.py",
}
RUN_HERE = [path for path in PAGES + EXAMPLES if path not in RUN_ELSEWHERE]
_AS_INSTALLED = (
    "import sys\n"
    "sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, '__module__', '').startswith('__editable__')]\n"
)
_FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _sources(path: str) -> list[str]:
    text = (ROOT / path).read_text(encoding="utf-8")
    return _FENCE.findall(text) if path.endswith(".md") else [text]


def _bare_imports(source: str) -> list[str]:
    """The imports of the top-level ``modules`` package: ``from modules[.x] import``, ``import modules[.x]``,
    ``importlib.import_module("modules[.x]")``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            if ast.unparse(node.func).endswith(("import_module", "__import__")):
                names = [str(node.args[0].value)]
        found += [ast.unparse(node) for name in names if name == "modules" or name.startswith("modules.")]
    return found


def test_the_lists_name_only_pages_and_examples_that_exist() -> None:
    assert set(RUN_ELSEWHERE) <= set(PAGES + EXAMPLES), set(RUN_ELSEWHERE) - set(PAGES + EXAMPLES)


@pytest.mark.parametrize("path", PAGES + EXAMPLES)
def test_pages_and_examples_import_the_io_side_only_through_prompter_modules(path: str) -> None:
    bare = [line for source in _sources(path) for line in _bare_imports(source)]
    assert not bare, f"{path}: {bare} fails in a project with its own modules package; import from prompter.modules"


def test_the_bare_import_check_sees_every_form_of_import() -> None:
    forms = [
        "from modules import OnlineChatModule",
        "from modules.testing import FakeOpenAIServer",
        "import modules",
        "import os, modules.local.tiny_model as tiny",
        "if True:\n    import modules.online",
        "import importlib\nimportlib.import_module('modules.playground')",
    ]
    assert all(_bare_imports(form) for form in forms)
    fine = "from prompter.modules import testing\nimport prompter.modules.online.sources\nimport modulesx\n"
    assert not _bare_imports(fine)


@pytest.mark.parametrize("path", RUN_HERE)
def test_page_or_example_runs_in_a_project_with_its_own_modules_package(path: str, tmp_path: Path) -> None:
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "__init__.py").write_text("MINE = 'app'\n", encoding="utf-8")
    if path.endswith(".md"):
        code = "\n".join(_sources(path))
    else:
        code = f"import runpy\nrunpy.run_path({str(ROOT / path)!r}, run_name='__main__')\n"
    check = "\nimport modules\nassert modules.MINE == 'app', 'the app package was replaced'\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _AS_INSTALLED + code + check],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
