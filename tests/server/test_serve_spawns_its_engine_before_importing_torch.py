"""``prompter serve`` starts its engine process before this process imports torch.

Both processes import torch and transformers at start-up (seconds of CPU each). The engine process
was spawned only after the server process had imported torch twice over: once to set its own
intra-op threads, which an engine process never uses, and once to check that the CPU is available.
On a 2-core machine the engine's imports then began seconds late.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from modules.errors import MissingExtraError

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def test_checking_the_cpu_is_available_does_not_import_torch() -> None:
    done = _run(
        "import sys\n"
        "from modules.local.engines import check_device_available\n"
        "check_device_available('cpu')\n"
        "print('torch' in sys.modules)\n"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


def test_the_cpu_without_torch_installed_is_still_the_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from modules.local.engines import check_device_available

    monkeypatch.setitem(sys.modules, "torch", None)  # what an import of an absent torch finds
    with pytest.raises(MissingExtraError, match="'local' extra"):
        check_device_available("cpu")


def test_serve_spawns_the_engine_process_before_torch_is_imported_here() -> None:
    """The engine process is spawned (``Process.start``) while ``torch`` is not yet in this process."""
    code = r"""
import sys
import modules.local.engines.process as process_module
from modules import cli

def watched(self, *a, **k):
    print('torch imported first:', 'torch' in sys.modules, flush=True)
    raise SystemExit(0)  # enough: the order is known

process_module.ProcessEngine.spawn = watched
cli.main(["serve", "--model", sys.argv[1], "--port", "0"])
"""
    from modules.local.tiny_model import cached_tiny_model

    done = subprocess.run(
        [sys.executable, "-c", code, str(cached_tiny_model())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "torch imported first: False" in done.stdout, (done.stdout[-2000:], done.stderr[-2000:])


def test_a_thread_count_below_one_is_still_refused_by_its_flag_when_an_engine_process_runs_the_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from modules.cli import main
    from modules.local.tiny_model import cached_tiny_model

    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--model", str(cached_tiny_model()), "--port", "0", "--torch-threads", "0"])
    assert exit_.value.code == 2  # a usage error, said before anything loads
    assert "--torch-threads" in capsys.readouterr().err
