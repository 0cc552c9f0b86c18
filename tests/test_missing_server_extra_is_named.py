"""Without the 'server' extra, serving and the playground say which extra to install.

``TrainableModule(...).start(serve=True)`` and ``create_playground_app()`` raised a
raw ``ModuleNotFoundError: fastapi`` on an install without ``[server]``; the CLI
already named the extra. Simulated by hiding the package (``sys.modules[name] =
None`` makes its import fail as if it were not installed), in a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

CALLS = {
    "playground": "from modules.playground import create_playground_app\ncreate_playground_app()",
    "serve": (
        "from modules.local.tiny_model import cached_tiny_model\n"
        "from modules.local.trainable import TrainableModule\n"
        "TrainableModule(str(cached_tiny_model())).start(serve=True)"
    ),
}


@pytest.mark.parametrize(
    ("call", "hidden"),
    # the playground's app needs no uvicorn (only its CLI runs one, and names the extra itself)
    [("playground", "fastapi"), ("serve", "fastapi"), ("serve", "uvicorn")],
)
def test_a_missing_server_package_is_a_missing_extra_error_naming_server(call: str, hidden: str) -> None:
    script = (
        f"import sys\nsys.modules[{hidden!r}] = None\n"
        "from modules.errors import MissingExtraError\n"
        "try:\n    " + CALLS[call].replace("\n", "\n    ") + "\n"
        "except MissingExtraError as exc:\n    print('MISSING', exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "MISSING" in done.stdout and "'server' extra" in done.stdout and "prompter-kit[server]" in done.stdout
