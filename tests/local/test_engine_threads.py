"""How many PyTorch threads the engine process decodes on: one for a small model, else the usable CPUs less one.

The engine process used to take the calling process's ``torch.get_num_threads()``, which is every core
in an application that never set it: its threads then took the cores the application's own threads
(rendering, tokenizing, waiting for answers) needed. On 2 cores, 64 threads calling one module gave
13-15x one caller's throughput with p95 4.2-5.2x; with one engine thread, 20-21x and 3.1-3.2x.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.errors import ModuleConfigError
from modules.local.engines import SMALL_MODEL_PARAMETERS, default_torch_threads, usable_cpus
from modules.local.trainable import TrainableModule


def test_the_engine_process_does_not_take_the_callers_thread_count(tiny_model_path: Path) -> None:  # noqa: F811
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(before + 2)  # an application that asked for more threads than the loop should take
    module = TrainableModule(tiny_model_path, max_batch_size=4)
    try:
        module.start()
        engine = module._backend.batcher
        assert engine.config.torch_threads is None  # chosen in the engine process, by the model's size
        assert engine.threads == 1 != torch.get_num_threads()  # the tiny model is small: one thread
        assert module("hi") is not None  # the engine decodes with it
    finally:
        module.stop()
        torch.set_num_threads(before)


def test_torch_threads_given_to_the_module_reach_the_engine_process(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_batch_size=4, torch_threads=2)
    try:
        module.start()
        assert module._backend.batcher.config.torch_threads == 2
        assert module._backend.batcher.threads == 2  # asked for: taken even for a small model
    finally:
        module.stop()


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "2"])
def test_a_thread_count_that_is_not_a_positive_int_is_refused_by_name(bad: object, tiny_model_path: Path) -> None:  # noqa: F811
    with pytest.raises(ModuleConfigError, match="torch_threads"):
        TrainableModule(tiny_model_path, max_batch_size=4, torch_threads=bad)  # type: ignore[arg-type]


def test_usable_cpus_are_the_affinity_set_where_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2, 5, 7}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert usable_cpus() == 4  # a container or taskset limit, not the host's 64 cores
    assert default_torch_threads() == 3

    def refused(pid: int) -> set[int]:
        raise OSError("not permitted")

    monkeypatch.setattr(os, "sched_getaffinity", refused, raising=False)
    assert usable_cpus() == 64
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    assert usable_cpus() == 64
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert usable_cpus() == 1 and default_torch_threads() == 1


def test_a_small_model_gets_one_thread_a_large_one_the_cpus_less_one() -> None:
    # A model under SMALL_MODEL_PARAMETERS decodes on one thread whatever the machine: its matrices
    # are too small to split (the tiny model's loop alone: p95 165 ms on one thread, 200 ms on two).
    assert default_torch_threads(16, parameters=SMALL_MODEL_PARAMETERS - 1) == 1
    assert default_torch_threads(16, parameters=SMALL_MODEL_PARAMETERS) == 15
    assert default_torch_threads(16, parameters=7_000_000_000) == 15
    assert default_torch_threads(1, parameters=7_000_000_000) == 1
    assert default_torch_threads(16) == 15  # size unknown: the CPUs less one
