"""A module whose optional dependency is missing says which extra to install, never a bare ModuleNotFoundError."""

from __future__ import annotations

import subprocess
import sys

import pytest

SNIPPET = """
import sys
sys.modules[{blocked!r}] = None  # as if it were not installed
try:
    from modules import {name}
    {call}
except ImportError as exc:
    from modules import MissingExtraError
    assert isinstance(exc, MissingExtraError), type(exc)
    print(exc)
else:
    raise SystemExit("no error")
"""


@pytest.mark.parametrize(
    ("name", "blocked", "call", "extra"),
    [
        ("OnlineChatModule", "requests", "", "online"),
        ("TrainableModule", "transformers", "TrainableModule('.').build_request('hi')", "local"),
        ("TrainableModule", "torch", "TrainableModule('.').start()", "local"),
        ("TrainableModule", "torch", "TrainableModule('.', device='cuda').start()", "local"),
    ],
)
def test_a_missing_dependency_names_the_extra_to_install(name: str, blocked: str, call: str, extra: str) -> None:
    code = SNIPPET.format(blocked=blocked, name=name, call=call)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"pip install 'prompter-kit[{extra}]'" in done.stdout
