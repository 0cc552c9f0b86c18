"""The pages a new user reads first run as written inside a project that has its own ``modules`` package.

docs/install.md promises that ``prompter.modules`` works beside an application's own
``modules/`` folder, and README.md teaches that import. A page on the new user's path
that imports ``from modules...`` breaks there (``No module named 'modules.local'``):
each page's python blocks must reach the I/O side through ``prompter.modules`` only,
and they run, in order, from a folder whose ``modules`` package comes first on
``sys.path``, which stays the application's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEW_USER_PAGES = [
    "README.md",
    "docs/index.md",
    "docs/install.md",
    "docs/getting-started.md",
    "docs/coming-from-lazyllm.md",
    "docs/coming-from-hf-chat-templates.md",
    "docs/coming-from-langchain.md",
    "docs/coming-from-opencompass.md",
    "docs/coming-from-agentscope.md",
]
# getting-started loads and serves a model (tens of seconds): the wheel job runs it beside an app's package
RUN_HERE = [page for page in NEW_USER_PAGES if page not in ("README.md", "docs/getting-started.md")]
# An editable install's finder maps ``modules.local`` to this checkout by its full name, even under the
# app's ``modules``: without it, imports resolve as from an installed wheel (this checkout via PYTHONPATH).
_AS_INSTALLED = (
    "import sys\n"
    "sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, '__module__', '').startswith('__editable__')]\n"
)
_BARE_IMPORT = re.compile(r"^\s*(from\s+modules(\.\w+)*\s+import|import\s+modules\b)", re.M)


def _blocks(page: str) -> str:
    return "\n".join(re.findall(r"^```python\n(.*?)^```", (ROOT / page).read_text(encoding="utf-8"), re.S | re.M))


@pytest.mark.parametrize("page", NEW_USER_PAGES)
def test_new_user_pages_import_the_io_side_only_through_prompter_modules(page: str) -> None:
    bare = [m.group(0).strip() for m in _BARE_IMPORT.finditer(_blocks(page))]
    assert not bare, f"{page}: {bare} fails in a project with its own modules package; use prompter.modules"


@pytest.mark.parametrize("page", RUN_HERE)
def test_new_user_page_runs_in_a_project_with_its_own_modules_package(page: str, tmp_path: Path) -> None:
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "__init__.py").write_text("MINE = 'app'\n", encoding="utf-8")
    code = _AS_INSTALLED + _blocks(page) + "\nimport modules\nassert modules.MINE == 'app', 'the app package was replaced'\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
