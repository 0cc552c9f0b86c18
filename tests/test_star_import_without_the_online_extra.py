"""``from modules import *`` (and ``from prompter.modules import *``) work on an install without the
'online' extra: the star import takes every name that imports, and ``OnlineChatModule`` itself still
raises the MissingExtraError naming the extra. It raised that error from the star import before, so
an application that only runs local models could not star-import the package at all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("package", ["modules", "prompter.modules"])
def test_star_import_without_requests_takes_the_rest(package: str) -> None:
    script = (
        "import sys\nsys.modules['requests'] = None\n"
        f"from {package} import *\n"
        "assert 'TrainableModule' in dir() and 'ModuleError' in dir() and 'OnlineChatModule' not in dir()\n"
        "from modules.errors import MissingExtraError\n"
        "try:\n    from modules import OnlineChatModule\nexcept MissingExtraError as exc:\n    print('MISSING', exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "MISSING" in done.stdout and "prompter-kit[online]" in done.stdout


def test_with_requests_the_star_import_has_every_name() -> None:
    import modules

    assert "OnlineChatModule" in modules.__all__
