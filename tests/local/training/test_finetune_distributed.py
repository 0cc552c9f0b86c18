"""The same entry point under torchrun: 2 CPU processes (gloo) give the loss curve of 1 process.

Each step's loss is the global batch's token-summed loss over its token count, computed the
same way by one process or split across two (DDP averages the gradients, the loss is
all-reduced), so the curves agree to float rounding: within a relative 1e-4 at every step.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "examples" / "finetune_distributed.py"
TOLERANCE = 1e-4  # relative, per step


def losses(folder: Path) -> tuple[int, list[float]]:
    log = json.loads((folder / "training_log.json").read_text(encoding="utf-8"))
    return log["world_size"], [s["loss"] for s in log["steps"]]


def test_two_processes_follow_the_loss_curve_of_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), str(tmp_path / "one")])
    runpy.run_path(str(SCRIPT), run_name="__main__")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
               str(SCRIPT), str(tmp_path / "two")]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]

    world_one, one = losses(tmp_path / "one")
    world_two, two = losses(tmp_path / "two")
    assert (world_one, world_two) == (1, 2)
    assert len(one) == len(two) == 6  # 8 examples, global batch 4, 3 epochs
    assert all(abs(a - b) <= TOLERANCE * abs(a) for a, b in zip(one, two)), (one, two)
    assert one[0] != one[1]  # a real curve, not a constant
    assert (tmp_path / "two" / "model.safetensors").is_file()
